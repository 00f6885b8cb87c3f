//! A fleet at once (`unstick diagnose --all-contexts`, `--contexts a,b`): several kubeconfig
//! contexts diagnosed concurrently, at most `limit` in flight, each within its own time bound,
//! summed up as one row per context. A context that cannot be diagnosed (unreachable, forbidden,
//! bad credentials, too slow) is a row saying so, never a failed run. UI-free: the caller gives
//! the diagnosis of one context as a function.
//!
//! JSON shape ([`FleetReport`]): documented in `docs/diagnose-json.md` ("Fleet").

use std::fmt::Write as _;
use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use serde::Serialize;

use crate::diagnose::{ObjectKind, Report, Severity};
use crate::text::sanitize;

/// Contexts diagnosed at once unless told otherwise.
pub const DEFAULT_IN_FLIGHT: usize = 4;
/// Time one context may take (connecting, listing, Ceph reads, rules) unless told otherwise.
pub const DEFAULT_CONTEXT_TIMEOUT: Duration = Duration::from_secs(60);

/// Exit code of a context (and of the run, the worst of them): 0 no findings.
pub const EXIT_CLEAN: u8 = 0;
/// Findings (complete reads).
pub const EXIT_FINDINGS: u8 = 1;
/// Complete but for inputs the rules need (as `diagnose`'s 3).
pub const EXIT_INCOMPLETE: u8 = 3;
/// The context could not be diagnosed (error or timeout).
pub const EXIT_UNDIAGNOSED: u8 = 4;

/// The fleet: one row per context, in the order asked (kubeconfig order for `--all-contexts`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetReport {
    /// When the run ended (RFC 3339).
    pub generated_at: Timestamp,
    /// The rows.
    pub contexts: Vec<ContextRow>,
}

/// One context's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextRow {
    /// The kubeconfig context name.
    pub context: String,
    /// What came of it.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// This row's exit code ([`EXIT_CLEAN`] … [`EXIT_UNDIAGNOSED`]).
    pub exit_code: u8,
}

/// What came of one context: JSON `"status": "diagnosed" | "error" | "timed_out"` and its keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The diagnosis ran.
    Diagnosed {
        /// Findings by severity.
        findings: SeverityCounts,
        /// Distinct pods the findings name.
        stuck_pods: usize,
        /// What the rules need that could not be read ([`Report::incomplete`]); empty: complete.
        incomplete: Vec<String>,
        /// The findings' ids ([`crate::diagnose::Finding::id`]).
        finding_ids: Vec<String>,
    },
    /// It could not run: one line (`connecting …: Connection refused`, `… 403 Forbidden …`).
    Error {
        /// The error.
        error: String,
    },
    /// It took longer than the per-context bound.
    TimedOut {
        /// The bound, in seconds.
        after_seconds: u64,
    },
}

/// Findings counted by [`Severity`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SeverityCounts {
    /// [`Severity::Critical`].
    pub critical: usize,
    /// [`Severity::Warning`].
    pub warning: usize,
    /// [`Severity::Info`].
    pub info: usize,
}

impl Outcome {
    /// The row of a report.
    pub fn of(r: &Report) -> Self {
        let mut findings = SeverityCounts::default();
        let mut pods = std::collections::BTreeSet::new();
        for f in &r.findings {
            match f.severity {
                Severity::Critical => findings.critical += 1,
                Severity::Warning => findings.warning += 1,
                Severity::Info => findings.info += 1,
            }
            pods.extend(f.objects.iter().filter(|o| o.kind == ObjectKind::Pod).map(|o| (&o.namespace, &o.name)));
        }
        Outcome::Diagnosed {
            findings,
            stuck_pods: pods.len(),
            incomplete: r.incomplete.clone(),
            finding_ids: r.findings.iter().map(|f| f.id.clone()).collect(),
        }
    }

    /// Exit code: incomplete 3, else findings 1, else 0; error and timeout 4.
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::Diagnosed { incomplete, .. } if !incomplete.is_empty() => EXIT_INCOMPLETE,
            Outcome::Diagnosed { finding_ids, .. } if !finding_ids.is_empty() => EXIT_FINDINGS,
            Outcome::Diagnosed { .. } => EXIT_CLEAN,
            Outcome::Error { .. } | Outcome::TimedOut { .. } => EXIT_UNDIAGNOSED,
        }
    }
}

impl FleetReport {
    /// The worst row's exit code (0 < 1 < 3 < 4); 0 for no rows.
    pub fn exit_code(&self) -> u8 {
        let rank = |c: u8| [EXIT_CLEAN, EXIT_FINDINGS, EXIT_INCOMPLETE, EXIT_UNDIAGNOSED].iter().position(|x| *x == c);
        self.contexts.iter().map(|r| r.exit_code).max_by_key(|c| rank(*c)).unwrap_or(EXIT_CLEAN)
    }
}

/// Diagnoses `contexts` with `diagnose` (one context's report, or its error as one line), at most
/// `in_flight` at once (0 counts as 1), each within `per_context` (the future is dropped after it:
/// its requests are cancelled). Rows keep the order of `contexts`; `now` stamps the report.
pub async fn diagnose_all<F, Fut>(
    contexts: Vec<String>,
    in_flight: usize,
    per_context: Duration,
    now: impl FnOnce() -> Timestamp,
    diagnose: F,
) -> FleetReport
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Report, String>>,
{
    let rows = futures::stream::iter(contexts.into_iter().map(|context| {
        let fut = diagnose(context.clone());
        async move {
            let outcome = match tokio::time::timeout(per_context, fut).await {
                Ok(Ok(r)) => Outcome::of(&r),
                Ok(Err(error)) => Outcome::Error { error },
                Err(_) => Outcome::TimedOut { after_seconds: per_context.as_secs() },
            };
            ContextRow { context, exit_code: outcome.exit_code(), outcome }
        }
    }))
    .buffered(in_flight.max(1))
    .collect()
    .await;
    FleetReport { generated_at: now(), contexts: rows }
}

/// The columns of a fleet table, in [`cells`] order.
pub const HEADER: [&str; 7] = ["CONTEXT", "STATUS", "CRITICAL", "WARNING", "INFO", "STUCK PODS", "INCOMPLETE / ERROR"];

/// The cells of a row in [`HEADER`] order, sanitized (not escaped): context, status (`clean`,
/// `findings`, `incomplete`, `error`, `timed out`), the three severity counts and stuck pods (`-`
/// when not diagnosed), then the incomplete inputs or the error.
pub fn cells(r: &ContextRow) -> Vec<String> {
    let (status, counts, note) = match &r.outcome {
        Outcome::Diagnosed { findings: f, stuck_pods, incomplete, .. } => {
            let status = match r.exit_code {
                EXIT_INCOMPLETE => "incomplete",
                EXIT_FINDINGS => "findings",
                _ => "clean",
            };
            let counts = [f.critical, f.warning, f.info, *stuck_pods].map(|n| n.to_string());
            (status, counts, incomplete.join(", "))
        }
        Outcome::Error { error } => ("error", ["-"; 4].map(String::from), error.clone()),
        Outcome::TimedOut { after_seconds } => {
            ("timed out", ["-"; 4].map(String::from), format!("no result within {after_seconds} s"))
        }
    };
    let mut v = vec![sanitize(&r.context), status.to_string()];
    v.extend(counts);
    v.push(sanitize(&note));
    v
}

/// Plain text: a table with [`HEADER`], then `N contexts: …` counts by status.
pub fn text(f: &FleetReport) -> String {
    let mut rows = vec![HEADER.map(String::from).to_vec()];
    rows.extend(f.contexts.iter().map(cells));
    let mut s = crate::text::table(&rows, &[false, false, true, true, true, true, false]);
    let _ = writeln!(s, "\n{}", summary(f));
    s
}

/// Markdown: a heading, the table (cluster text escaped), the summary line.
pub fn markdown(f: &FleetReport) -> String {
    let mut s = format!("# unstick fleet diagnosis\n\nGenerated {}.\n\n", f.generated_at);
    let line = |c: &[String]| format!("| {} |\n", c.join(" | "));
    s.push_str(&line(&HEADER.map(String::from)));
    s.push_str(&line(&["---"; 7].map(String::from)));
    for r in &f.contexts {
        s.push_str(&line(&cells(r).iter().map(|c| crate::diagnose::render::md(c)).collect::<Vec<_>>()));
    }
    let _ = writeln!(s, "\n{}", summary(f));
    s
}

/// `3 contexts: 1 clean, 1 with findings, 0 incomplete, 1 not diagnosed`.
fn summary(f: &FleetReport) -> String {
    let n = |c: u8| f.contexts.iter().filter(|r| r.exit_code == c).count();
    format!(
        "{} contexts: {} clean, {} with findings, {} incomplete, {} not diagnosed",
        f.contexts.len(),
        n(EXIT_CLEAN),
        n(EXIT_FINDINGS),
        n(EXIT_INCOMPLETE),
        n(EXIT_UNDIAGNOSED)
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::diagnose::ObjectRef;

    /// A finding naming pod `ns/p` (twice: a pod named twice counts once).
    fn finding(i: usize) -> crate::diagnose::Finding {
        let pod = ObjectRef { kind: ObjectKind::Pod, namespace: Some("ns".into()), name: "p".into(), pool: None };
        crate::diagnose::Finding {
            id: format!("stale-lock:{i}"),
            pattern: crate::diagnose::PatternId::StaleLock,
            severity: if i == 0 { Severity::Critical } else { Severity::Warning },
            summary: String::new(),
            since: None,
            volume: None,
            node: None,
            device: None,
            objects: vec![pod.clone(), pod],
            evidence: vec![],
            explanation: String::new(),
            playbook: String::new(),
            unverified: vec![],
        }
    }

    fn report(findings: usize, incomplete: &[&str]) -> Report {
        Report {
            findings: (0..findings).map(finding).collect(),
            missing: vec![],
            incomplete: incomplete.iter().map(|s| s.to_string()).collect(),
            generated_at: Timestamp::UNIX_EPOCH,
            input: "live x".into(),
        }
    }

    #[tokio::test]
    async fn bounded_in_flight_ordered_rows_and_a_timeout_per_context() {
        let (now, max) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let names: Vec<String> = (0..9).map(|i| format!("c{i}")).collect();
        let f = diagnose_all(
            names.clone(),
            3,
            Duration::from_millis(400),
            || Timestamp::UNIX_EPOCH,
            |c| {
                let (now, max) = (now.clone(), max.clone());
                async move {
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    max.fetch_max(n, Ordering::SeqCst);
                    // work: c4 never answers, the others take 10 to 50 ms
                    if c == "c4" {
                        futures::future::pending::<()>().await;
                    }
                    tokio::time::sleep(Duration::from_millis(10 * (1 + c[1..].parse::<u64>().unwrap() % 5))).await;
                    now.fetch_sub(1, Ordering::SeqCst);
                    match c.as_str() {
                        "c1" => Err("connecting: Connection refused".into()),
                        "c2" => Ok(report(1, &[])),
                        "c3" => Ok(report(0, &["pods (403 Forbidden)"])),
                        _ => Ok(report(0, &[])),
                    }
                }
            },
        )
        .await;
        assert_eq!(max.load(Ordering::SeqCst), 3, "at most 3 in flight, and 3 used");
        assert_eq!(f.contexts.iter().map(|r| r.context.clone()).collect::<Vec<_>>(), names);
        let codes: Vec<u8> = f.contexts.iter().map(|r| r.exit_code).collect();
        assert_eq!(codes, [0, 4, 1, 3, 4, 0, 0, 0, 0]);
        assert_eq!(f.contexts[4].outcome, Outcome::TimedOut { after_seconds: 0 });
        assert_eq!(f.exit_code(), EXIT_UNDIAGNOSED);
        let t = text(&f);
        assert!(t.starts_with("CONTEXT  STATUS      CRITICAL"), "{t}");
        assert!(
            t.contains("c1       error              -        -     -           -  connecting: Connection refused"),
            "{t}"
        );
        assert!(t.ends_with("9 contexts: 5 clean, 1 with findings, 1 incomplete, 2 not diagnosed\n"), "{t}");
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["contexts"][1]["status"], "error");
        assert_eq!(json["contexts"][3]["incomplete"][0], "pods (403 Forbidden)");
        assert_eq!(json["contexts"][4]["status"], "timed_out");
    }

    #[test]
    fn the_worst_code_wins_and_markdown_escapes_cluster_text() {
        let row = |context: &str, outcome: Outcome| ContextRow {
            context: context.into(),
            exit_code: outcome.exit_code(),
            outcome,
        };
        let mut f = FleetReport {
            generated_at: Timestamp::UNIX_EPOCH,
            contexts: vec![row("a", Outcome::of(&report(1, &[]))), row("b|<x>", Outcome::of(&report(0, &["ceph"])))],
        };
        assert_eq!(f.exit_code(), EXIT_INCOMPLETE);
        f.contexts.truncate(1);
        assert_eq!(f.exit_code(), EXIT_FINDINGS);
        f.contexts.push(row("b|<x>", Outcome::Error { error: "x".into() }));
        let md = markdown(&f);
        assert!(md.contains("| b\\|\\<x\\> | error |"), "{md}");
        assert_eq!(FleetReport { generated_at: Timestamp::UNIX_EPOCH, contexts: vec![] }.exit_code(), EXIT_CLEAN);
    }
}
