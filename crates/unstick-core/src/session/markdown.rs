//! Markdown rendering of a postmortem (layout documented in `docs/session-export.md`).
//!
//! GitHub-flavoured Markdown: headings, lists and pipe tables. Table cells escape `\`, `|`,
//! backticks, `*`, `_`, `<` and `>`; commands are code spans whose fence is longer than any run of
//! backticks inside. Times are UTC, `YYYY-MM-DD HH:MM:SS`. Text was sanitized when the postmortem
//! was built, so no control characters or terminal escapes remain.

use std::fmt::Write as _;

use jiff::Timestamp;

use super::postmortem::Postmortem;

fn time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M:%S").to_string()
}

fn opt_time(t: Option<Timestamp>) -> String {
    t.map(time).unwrap_or_else(|| "-".into())
}

/// Plain text for a table cell or list item: Markdown punctuation escaped, one line.
pub(super) fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '|' | '`' | '*' | '_' | '<' | '>' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    if out.is_empty() { "-".into() } else { out }
}

/// A code span safe in a table cell: fence longer than any backtick run, `|` escaped.
pub(super) fn code(s: &str) -> String {
    let one_line: String = s.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
    let mut longest = 0;
    let mut run = 0;
    for c in one_line.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let body = one_line.replace('|', "\\|");
    if body.is_empty() {
        return "-".into();
    }
    let pad = if body.starts_with('`') || body.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{body}{pad}{fence}")
}

fn duration(secs: i64) -> String {
    let s = secs.max(0);
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m {sec:02}s"),
        (h, m, sec) => format!("{h}h {m:02}m {sec:02}s"),
    }
}

/// The whole Markdown document. Infallible (writing to a `String`).
pub(super) fn markdown(pm: &Postmortem) -> String {
    let mut o = String::new();
    let _ = render(pm, &mut o);
    o
}

fn render(pm: &Postmortem, o: &mut String) -> std::fmt::Result {
    let s = &pm.summary;
    writeln!(o, "# Postmortem timeline: session {}\n", cell(&pm.session))?;
    writeln!(o, "## Summary\n")?;
    writeln!(o, "| Field | Value |\n|---|---|")?;
    let dash = || "-".to_string();
    writeln!(o, "| Context | {} |", s.context.as_deref().map(cell).unwrap_or_else(dash))?;
    writeln!(o, "| Operator | {} |", s.operator.as_deref().map(cell).unwrap_or_else(dash))?;
    writeln!(o, "| Mode | {} |", s.mode.map(|m| m.as_str().to_string()).unwrap_or_else(dash))?;
    writeln!(o, "| Writes | {} |", s.writes.map(|w| w.as_str().to_string()).unwrap_or_else(dash))?;
    writeln!(o, "| unstick version | {} |", s.unstick_version.as_deref().map(cell).unwrap_or_else(dash))?;
    writeln!(o, "| Started (UTC) | {} |", opt_time(s.started))?;
    let ended = match (s.ended, s.last_record) {
        (Some(e), _) => time(e),
        (None, Some(l)) => format!("no end record (last record {})", time(l)),
        (None, None) => dash(),
    };
    writeln!(o, "| Ended (UTC) | {ended} |")?;
    writeln!(o, "| Duration | {} |", s.duration_seconds.map(duration).unwrap_or_else(dash))?;
    writeln!(o, "| Clock | {} |", cell(&pm.clock))?;
    let restored = match &pm.service_restored {
        Some(r) => format!("{} (pod {} Running)", time(r.time), cell(&r.pod)),
        None => "not seen in this session".into(),
    };
    writeln!(o, "| Service restored (UTC) | {restored} |")?;
    let c = &s.counts;
    for (label, n) in [
        ("Findings appeared", c.findings_appeared),
        ("Findings cleared", c.findings_cleared),
        ("Confirmations accepted", c.confirmations_accepted),
        ("Confirmations accepted, then refused before sending", c.confirmations_not_sent),
        ("Confirmations declined", c.confirmations_declined),
        ("Actions", c.actions),
        ("Actions failed", c.actions_failed),
        ("Steps done", c.steps_done),
        ("Steps failed", c.steps_failed),
        ("Steps skipped", c.steps_skipped),
        ("Backups", c.backups),
        ("Undos", c.undos),
        ("Notes", c.notes),
        ("Unreadable log lines", c.unreadable_lines),
    ] {
        writeln!(o, "| {label} | {n} |")?;
    }

    writeln!(o, "\n## Affected objects\n")?;
    if pm.affected_objects.is_empty() {
        writeln!(o, "None recorded.")?;
    }
    for obj in &pm.affected_objects {
        writeln!(o, "- {}", cell(obj))?;
    }

    writeln!(o, "\n## Timeline (UTC)\n")?;
    writeln!(o, "| Time (UTC) | Event | Details |\n|---|---|---|")?;
    for e in &pm.timeline {
        writeln!(o, "| {} | {} | {} |", time(e.time), e.event, cell(&e.text))?;
    }

    writeln!(o, "\n## Findings\n")?;
    if pm.findings.is_empty() {
        writeln!(o, "None.")?;
    }
    for f in &pm.findings {
        writeln!(o, "### {} ({})\n", cell(&f.id), cell(&f.severity))?;
        writeln!(o, "{}\n", cell(&f.summary))?;
        writeln!(o, "- Pattern: {}", cell(&f.pattern))?;
        writeln!(o, "- Appeared (UTC): {}", time(f.appeared))?;
        writeln!(
            o,
            "- Cleared (UTC): {}",
            f.cleared.map(time).unwrap_or_else(|| "still present at end of log".into())
        )?;
        let objs: Vec<String> = f.objects.iter().map(|x| cell(x)).collect();
        writeln!(o, "- Objects: {}\n", if objs.is_empty() { "-".into() } else { objs.join(", ") })?;
        if f.evidence.is_empty() {
            writeln!(o, "No evidence recorded.\n")?;
            continue;
        }
        writeln!(o, "| Observed (UTC) | Source | Evidence |\n|---|---|---|")?;
        for e in &f.evidence {
            writeln!(o, "| {} | {} | {} |", time(e.observed_at), cell(&e.source), cell(&e.text))?;
        }
        writeln!(o)?;
    }
    if pm.findings.is_empty() {
        writeln!(o)?;
    }

    writeln!(o, "## Confirmations\n")?;
    if pm.confirmations.is_empty() {
        writeln!(o, "None.\n")?;
    } else {
        writeln!(o, "| Time (UTC) | Step | Answer | Command | Reversible | Inverse | Objects |")?;
        writeln!(o, "|---|---|---|---|---|---|---|")?;
        for c in &pm.confirmations {
            let objs: Vec<String> = c.objects.iter().map(|x| cell(x)).collect();
            writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} |",
                time(c.time),
                cell(&c.step_id),
                match (c.accepted, c.sent) {
                    (true, true) => "accepted",
                    (true, false) => "accepted, not sent (refused by the re-check)",
                    _ => "declined",
                },
                code(&c.command),
                if c.reversible { "yes" } else { "no" },
                cell(&c.inverse),
                if objs.is_empty() { "-".into() } else { objs.join(", ") }
            )?;
        }
        writeln!(o)?;
    }

    writeln!(o, "## Actions\n")?;
    if pm.actions.is_empty() {
        writeln!(o, "None.\n")?;
    } else {
        writeln!(o, "Command: the request as sent, every value read just before sending.\n")?;
        writeln!(o, "| Time (UTC) | Step | Command | Result | Code | Outcome | Duration |")?;
        writeln!(o, "|---|---|---|---|---|---|---|")?;
        for a in &pm.actions {
            let code_text = match (a.exit_code, a.api_status) {
                (Some(c), _) => format!("exit {c}"),
                (None, Some(h)) => format!("HTTP {h}"),
                _ => "-".into(),
            };
            writeln!(
                o,
                "| {} | {} | {} | {} | {code_text} | {} | {} |",
                time(a.time),
                cell(&a.step_id),
                code(a.sent.as_deref().unwrap_or(&a.command)),
                if a.ok { "ok" } else { "FAILED" },
                cell(&a.outcome),
                super::postmortem::ms(a.duration_ms)
            )?;
        }
        writeln!(o)?;
    }

    writeln!(o, "## Steps\n")?;
    if pm.steps.is_empty() {
        writeln!(o, "None.\n")?;
    } else {
        writeln!(
            o,
            "Checks, verifications, waits, manual steps, and steps skipped or refused (writes are under Actions).\n"
        )?;
        writeln!(o, "| Time (UTC) | Step | Kind | Title | Result | Detail |\n|---|---|---|---|---|---|")?;
        for st in &pm.steps {
            writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} |",
                time(st.time),
                cell(&st.step_id),
                cell(&st.kind),
                cell(&st.title),
                st.result.as_str(),
                cell(&st.detail)
            )?;
        }
        writeln!(o)?;
    }

    writeln!(o, "## Backups\n")?;
    if pm.backups.is_empty() {
        writeln!(o, "None.\n")?;
    }
    for b in &pm.backups {
        let snap = b.snapshot.as_deref().map(|x| format!(", snapshot {}", code(x))).unwrap_or_default();
        writeln!(o, "- {} UTC: {} file(s){snap}", time(b.time), b.paths.len())?;
        for c in &b.commands {
            writeln!(o, "  - ran {}", code(c))?;
        }
        for p in &b.paths {
            writeln!(o, "  - {}", code(p))?;
        }
    }
    if !pm.backups.is_empty() {
        writeln!(o)?;
    }

    writeln!(o, "## Left to clean up\n")?;
    if pm.left_to_clean_up.is_empty() {
        writeln!(o, "Nothing recorded.")?;
    }
    for x in &pm.left_to_clean_up {
        writeln!(o, "- {}", cell(x))?;
    }
    writeln!(o)?;

    writeln!(o, "## Undos\n")?;
    if pm.undos.is_empty() {
        writeln!(o, "None.\n")?;
    }
    for u in &pm.undos {
        writeln!(
            o,
            "- {} UTC: undo of step {}: {} → {} {}",
            time(u.time),
            u.step,
            code(&u.command),
            if u.ok { "ok" } else { "FAILED" },
            cell(&u.outcome)
        )?;
    }
    if !pm.undos.is_empty() {
        writeln!(o)?;
    }

    writeln!(o, "## Notes\n")?;
    if pm.notes.is_empty() {
        writeln!(o, "None.\n")?;
    }
    for n in &pm.notes {
        writeln!(o, "- {} UTC: {}", time(n.time), cell(&n.text))?;
    }
    if !pm.notes.is_empty() {
        writeln!(o)?;
    }

    for d in &pm.debriefs {
        writeln!(o, "## Training debrief\n")?;
        writeln!(o, "Shown at {} UTC.\n", time(d.time))?;
        for line in d.text.lines() {
            writeln!(o, "    {line}")?;
        }
        writeln!(o)?;
    }

    if !pm.unreadable_lines.is_empty() {
        writeln!(o, "## Unreadable log lines\n")?;
        writeln!(o, "Kept in the log file; not part of the timeline above.\n")?;
        for p in &pm.unreadable_lines {
            writeln!(o, "- line {}: {}: {}", p.line, cell(&p.error), code(&p.excerpt))?;
        }
        writeln!(o)?;
    }
    // One trailing newline, no blank line at the end.
    while o.ends_with("\n\n") {
        o.pop();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_escape_markdown() {
        assert_eq!(cell("a|b `c` *d*"), r"a\|b \`c\` \*d\*");
        assert_eq!(cell(""), "-");
        assert_eq!(code("rbd lock rm 'auto 1'"), "`rbd lock rm 'auto 1'`");
        assert_eq!(code("a | b"), r"`a \| b`");
        assert_eq!(code("x `y` z"), "``x `y` z``");
        assert_eq!(code("`y`"), "`` `y` ``");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(5), "5s");
        assert_eq!(duration(125), "2m 05s");
        assert_eq!(duration(3725), "1h 02m 05s");
        assert_eq!(duration(-3), "0s");
    }
}
