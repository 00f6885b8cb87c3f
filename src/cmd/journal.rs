//! `unstick journal [INCIDENT]`: lists the incidents (steps, interrupted, unreadable lines), or
//! shows one incident's steps with status, command, live re-check and outcome, its backups and
//! notes, and every line that could not be read (reported, kept in the file). Exit codes: 0 shown,
//! 2 error (no such incident, unreadable directory, bad config).

use std::path::PathBuf;
use std::process::ExitCode;

use super::args::ConsoleArgs;
use super::load_config;
use unstick_core::config::Config;
use unstick_core::remedy::journal::step::{step_label, undone_step};
use unstick_core::remedy::journal::{self, Body, WriteStatus, outcome_text};
use unstick_core::text::sanitize;

/// Options of `unstick journal`.
#[derive(Debug, Clone, clap::Args)]
pub struct JournalArgs {
    /// The incident to show (a directory name from the list); without it, list the incidents.
    pub incident: Option<String>,
    /// Incident directory base (default: `remedy.journal_dir`, else $XDG_DATA_HOME/unstick/incidents).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Config file.
    #[command(flatten)]
    pub config: super::args::ConfigArg,
}

/// The incident directory base: `--dir`, else `remedy.journal_dir`, else the XDG data dir.
pub fn base(dir: Option<&PathBuf>, cfg: &Config) -> PathBuf {
    match (dir, cfg.remedy.journal_dir.as_str()) {
        (Some(d), _) => d.clone(),
        (None, "") => journal::default_base(),
        (None, d) => PathBuf::from(d),
    }
}

/// Runs `unstick journal`.
pub fn run(console: ConsoleArgs, args: JournalArgs) -> ExitCode {
    let cfg = match load_config(&console) {
        Ok(c) => c,
        Err(e) => {
            unstick_core::eprintln_safe!("unstick journal: {e:#}");
            return ExitCode::from(2);
        }
    };
    let base = base(args.dir.as_ref(), &cfg);
    let res = match &args.incident {
        None => list(&base).map(|text| text + &training_note(&base, &super::train::training_root())),
        Some(id) => show(&base, id),
    };
    match res {
        Ok(text) => {
            unstick_core::print_safe!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            unstick_core::eprintln_safe!("unstick journal: {e}");
            ExitCode::from(2)
        }
    }
}

/// A line saying where the training sessions' journals are (they are kept apart from real
/// incidents), when `root` holds any and `base` is not one of them; else nothing.
pub fn training_note(base: &std::path::Path, root: &std::path::Path) -> String {
    if base.starts_with(root) {
        return String::new();
    }
    let Ok(rd) = std::fs::read_dir(root) else { return String::new() };
    let mut sessions: Vec<String> =
        rd.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    sessions.sort();
    let Some(newest) = sessions.last() else { return String::new() };
    format!(
        "\ntraining journals are kept apart: {} session(s) under {} (newest: `unstick journal --dir {}`)\n",
        sessions.len(),
        sanitize(&root.display().to_string()),
        sanitize(&root.join(newest).display().to_string()),
    )
}

/// Why `unstick journal` showed nothing (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ShowError {
    /// An incident id that is not a plain directory name (empty, `/`, `..`).
    #[error("invalid incident id {0:?}")]
    InvalidId(String),
    /// No journal for that incident under the base directory.
    #[error("no incident {id:?} under {} (run `unstick journal` to list them)", .base.display())]
    NoIncident {
        /// The incident id given.
        id: String,
        /// The incident directory base.
        base: PathBuf,
    },
    /// The directory or the journal could not be read.
    #[error(transparent)]
    Journal(#[from] journal::JournalError),
}

/// The incident list as text.
pub fn list(base: &std::path::Path) -> Result<String, ShowError> {
    let items = unstick_core::remedy::journal::incidents::list_incidents(base)?;
    if items.is_empty() {
        return Ok(format!("no incidents under {}\n", base.display()));
    }
    let mut rows = vec![["INCIDENT", "STARTED", "STEPS", "INTERRUPTED", "PROBLEMS"].map(String::from).to_vec()];
    for i in items {
        let started = i.started.map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()).unwrap_or_else(|| "-".into());
        rows.push(vec![
            sanitize(&i.id),
            started,
            i.steps.to_string(),
            i.interrupted.to_string(),
            i.problems.to_string(),
        ]);
    }
    // columns sized to their longest cell: long incident ids never push the others out of line
    let out = unstick_core::text::table(&rows, &[false, false, true, true, true]);
    Ok(out)
}

/// One incident as text.
pub fn show(base: &std::path::Path, id: &str) -> Result<String, ShowError> {
    if id.is_empty() || id.contains('/') || id.contains("..") {
        return Err(ShowError::InvalidId(id.to_string()));
    }
    let path = base.join(id).join(journal::JOURNAL_FILE);
    if !path.is_file() {
        return Err(ShowError::NoIncident { id: id.to_string(), base: base.to_path_buf() });
    }
    let rep = journal::read(&path)?;
    let mut out = format!("incident {id}\njournal  {}\n", path.display());
    if let Some((_, r)) = rep.records.first() {
        out.push_str(&format!("operator {}  context {}\n", sanitize(&r.operator), sanitize(&r.context)));
    }
    out.push('\n');
    for (line, rec) in &rep.records {
        let time = rec.time.strftime("%H:%M:%SZ");
        match &rec.body {
            Body::Intent(_) | Body::Outcome(_) => {}
            Body::Backup(b) => {
                out.push_str(&format!("{time} backup: snapshot {}\n", b.snapshot.as_deref().unwrap_or("(none)")));
                for f in &b.files {
                    out.push_str(&format!(
                        "           {} ({} bytes, sha256 {})\n",
                        f.path.display(),
                        f.bytes,
                        f.sha256
                    ));
                }
                if let Some(e) = &b.export {
                    out.push_str(&format!(
                        "           export {} ({} bytes, sha256 {})\n",
                        e.path.display(),
                        e.bytes,
                        e.sha256
                    ));
                }
            }
            Body::Step(st) => {
                out.push_str(&format!(
                    "{time} {} {}: {}{}\n",
                    step_label(&st.step_id),
                    st.kind,
                    st.result.as_str(),
                    if st.detail.is_empty() { String::new() } else { format!(" — {}", sanitize(&st.detail)) }
                ));
            }
            Body::Note { step_id, text } => {
                out.push_str(&format!(
                    "{time} note{}: {}  (line {line})\n",
                    step_id.as_deref().map(|s| format!(" {s}")).unwrap_or_default(),
                    sanitize(text)
                ));
            }
        }
        if let Body::Intent(i) = &rec.body
            && let Some(s) = rep.steps().into_iter().find(|s| s.line == *line)
        {
            let status = match s.status {
                WriteStatus::Done => "done".to_string(),
                WriteStatus::Failed => "FAILED".to_string(),
                WriteStatus::Interrupted => "INTERRUPTED — state unknown, re-check".to_string(),
            };
            // the playbook's numbering ("step 3 (stale-lock/3)"), the same as every screen
            let what = match (i.undo_of, undone_step(&i.step_id)) {
                (Some(n), None) => format!("undo of {}", rep.label_of(n)),
                _ => step_label(&i.step_id),
            };
            out.push_str(&format!("{time} {what}: {status}\n"));
            out.push_str(&format!("           command: {}\n", sanitize(&i.action.summary())));
            for p in &i.precheck {
                out.push_str(&format!("           re-check: {}\n", sanitize(p)));
            }
            if let Some(o) = &s.outcome {
                out.push_str(&format!("           outcome: {} ({} ms)\n", sanitize(&outcome_text(o)), o.duration_ms));
            }
            match &i.inverse {
                unstick_core::remedy::action::Inverse::Action { action } => {
                    out.push_str(&format!("           inverse: {}\n", action.summary()))
                }
                unstick_core::remedy::action::Inverse::Irreversible { why } => {
                    out.push_str(&format!("           irreversible: {}\n", sanitize(why)))
                }
            }
        }
    }
    let orphans = orphaned_backup_files(&base.join(id), &rep);
    if !orphans.is_empty() {
        out.push_str(&format!(
            "\n{} orphaned backup file(s): written but named by no backup record (a crash before the record, or copied in):\n",
            orphans.len()
        ));
        for p in &orphans {
            out.push_str(&format!("  {}\n", p.display()));
        }
    }
    let snaps = orphaned_snapshots(&rep);
    if !snaps.is_empty() {
        out.push_str(&format!(
            "\n{} orphaned backup snapshot(s), named by no backup record (check: rbd snap ls; remove when not needed):\n",
            snaps.len()
        ));
        for OrphanedSnapshot { snapshot: snap, step, status } in &snaps {
            let why = match status {
                WriteStatus::Interrupted => "step interrupted: may exist",
                _ => "created",
            };
            out.push_str(&format!("  {} (step {step}, {why})\n", sanitize(snap)));
        }
    }
    if !rep.problems.is_empty() {
        out.push_str(&format!("\n{} unreadable line(s), kept in the file:\n", rep.problems.len()));
        for p in &rep.problems {
            out.push_str(&format!("  {p}\n"));
        }
    }
    let plan = rep.undo_plan(None);
    out.push_str(&format!("\nundo: {} step(s) can be undone (newest first)", plan.items.len()));
    if let Some(i) = plan.items.first() {
        out.push_str(&format!("; next: {} → {}", step_label(&i.step_id), i.action.summary()));
    }
    out.push('\n');
    Ok(out)
}

/// A backup snapshot no backup record names ([`orphaned_snapshots`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanedSnapshot {
    /// `pool/image@snap`.
    pub snapshot: String,
    /// The `snap create` step's number.
    pub step: u32,
    /// Done (it exists) or interrupted (it may).
    pub status: WriteStatus,
}

/// Backup snapshots the journal shows were created (a `snap create` step done) or may have been
/// (its step interrupted) that no backup record names, in journal order. A failed `snap create`
/// created nothing and is not listed. Read from the journal alone: the console that crashed was
/// the only one to know the name.
pub fn orphaned_snapshots(rep: &journal::JournalReport) -> Vec<OrphanedSnapshot> {
    let named: std::collections::BTreeSet<&str> = rep.backups().iter().filter_map(|b| b.snapshot.as_deref()).collect();
    rep.steps()
        .into_iter()
        .filter(|s| s.status != WriteStatus::Failed)
        .filter_map(|s| match &s.intent.action {
            unstick_core::remedy::action::WriteAction::SnapCreate { image, snap } => Some(OrphanedSnapshot {
                snapshot: format!("{}@{snap}", image.spec()),
                step: s.intent.step,
                status: s.status,
            }),
            _ => None,
        })
        .filter(|o| !named.contains(o.snapshot.as_str()))
        .collect()
}

/// Files under `<incident>/backup/` (any depth up to 4) that no backup record of `rep` names
/// (manifest files or export), sorted. Compared as canonical paths, so a relative `--dir` works.
pub fn orphaned_backup_files(incident_dir: &std::path::Path, rep: &journal::JournalReport) -> Vec<PathBuf> {
    let canon = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let named: std::collections::BTreeSet<PathBuf> = rep
        .backups()
        .into_iter()
        .flat_map(|b| b.files.iter().map(|f| f.path.clone()).chain(b.export.iter().map(|e| e.path.clone())))
        .map(|p| canon(&if p.is_relative() { incident_dir.join(&p) } else { p }))
        .collect();
    let mut out = Vec::new();
    let mut stack = vec![(incident_dir.join("backup"), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() && depth < 4 => stack.push((p, depth + 1)),
                Ok(t) if t.is_file() && !named.contains(&canon(&p)) => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use unstick_core::remedy::action::WriteAction;
    use unstick_core::remedy::journal::{ActionOutcome, Author, Journal};

    #[test]
    fn list_and_show_report_steps_interrupted_and_corrupt_lines() {
        let dir = tempfile::tempdir().unwrap();
        let author = Author { operator: "op@host".into(), context: "kh".into() };
        let mut j = Journal::open(dir.path(), "20261122t041500z-dead-node-watcher-pv1", author).unwrap();
        let a = WriteAction::BlocklistAdd { addr: "10.0.0.9:0/42".into() };
        let s = j.intent("dead-node-watcher/4", &a, None, vec!["node n1: Ready=Unknown".into()]).unwrap();
        j.outcome(ActionOutcome {
            step: s,
            ok: true,
            exit_code: Some(0),
            api_status: None,
            stderr: String::new(),
            duration_ms: 7,
        })
        .unwrap();
        j.intent("dead-node-watcher/5", &WriteAction::TaintOutOfService { node: "n1".into() }, None, vec![]).unwrap();
        drop(j);
        use std::io::Write;
        let path = dir.path().join("20261122t041500z-dead-node-watcher-pv1").join(journal::JOURNAL_FILE);
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"v\":1,\"tru").unwrap();
        let l = list(dir.path()).unwrap();
        assert!(
            l.contains("20261122t041500z-dead-node-watcher-pv1") && l.contains("      2            1         1"),
            "{l}"
        );
        let s = show(dir.path(), "20261122t041500z-dead-node-watcher-pv1").unwrap();
        assert!(s.contains("step 4 (dead-node-watcher/4): done"), "{s}");
        assert!(s.contains("ceph osd blocklist add 10.0.0.9:0/42"), "{s}");
        assert!(s.contains("INTERRUPTED — state unknown, re-check"), "{s}");
        assert!(s.contains("1 unreadable line(s)") && s.contains("truncated"), "{s}");
        assert!(s.contains("next: step 4 (dead-node-watcher/4) → ceph osd blocklist rm 10.0.0.9:0/42"), "{s}");
        assert!(!s.contains("orphaned"), "{s}");
        let backup = dir.path().join("20261122t041500z-dead-node-watcher-pv1").join("backup");
        std::fs::create_dir_all(&backup).unwrap();
        std::fs::write(backup.join("pv-pv1.yaml"), "kind: PersistentVolume\n").unwrap();
        std::fs::write(backup.join("pvc-ns-c.yaml"), "kind: PersistentVolumeClaim\n").unwrap();
        let mut j = Journal::open(
            dir.path(),
            "20261122t041500z-dead-node-watcher-pv1",
            Author { operator: "op@host".into(), context: "kh".into() },
        )
        .unwrap();
        let file = unstick_core::remedy::journal::FileRecord {
            path: backup.join("pvc-ns-c.yaml"),
            bytes: 28,
            sha256: "00".into(),
        };
        j.backup(unstick_core::remedy::journal::BackupRecord { files: vec![file], snapshot: None, export: None })
            .unwrap();
        drop(j);
        let s = show(dir.path(), "20261122t041500z-dead-node-watcher-pv1").unwrap();
        assert!(s.contains("1 orphaned backup file(s)") && s.contains("pv-pv1.yaml"), "{s}");
        assert_eq!(s.matches("pvc-ns-c.yaml").count(), 1, "named by the backup record only: {s}");
        assert!(matches!(show(dir.path(), "nope"), Err(ShowError::NoIncident { .. })));
        assert!(matches!(show(dir.path(), "../etc"), Err(ShowError::InvalidId(_))));
    }

    /// Issue 10: a snapshot created (or interrupted while being created) with no backup record is
    /// listed as orphaned; one a backup record names, or whose creation failed, is not.
    #[test]
    fn show_lists_snapshots_no_backup_record_names() {
        let dir = tempfile::tempdir().unwrap();
        let id = "20261122t041500z-stale-lock-pv1";
        let author = Author { operator: "op@host".into(), context: "kh".into() };
        let mut j = Journal::open(dir.path(), id, author).unwrap();
        let img = unstick_core::model::ImageRef { pool: "rbd".into(), namespace: String::new(), image: "img".into() };
        let snap = |s: &str| WriteAction::SnapCreate { image: img.clone(), snap: s.into() };
        let out = |step, ok| ActionOutcome {
            step,
            ok,
            exit_code: Some(0),
            api_status: None,
            stderr: String::new(),
            duration_ms: 1,
        };
        let s1 = j.intent("stale-lock/1", &snap("unstick-a"), None, vec![]).unwrap();
        j.outcome(out(s1, true)).unwrap();
        j.backup(unstick_core::remedy::journal::BackupRecord {
            files: vec![],
            snapshot: Some("rbd/img@unstick-a".into()),
            export: None,
        })
        .unwrap();
        let s2 = j.intent("stale-lock/1", &snap("unstick-b"), None, vec![]).unwrap();
        j.outcome(out(s2, true)).unwrap();
        let s3 = j.intent("stale-lock/1", &snap("unstick-c"), None, vec![]).unwrap();
        j.outcome(out(s3, false)).unwrap();
        j.intent("stale-lock/1", &snap("unstick-d"), None, vec![]).unwrap();
        drop(j);
        let s = show(dir.path(), id).unwrap();
        assert!(s.contains("2 orphaned backup snapshot(s)"), "{s}");
        assert!(s.contains("  rbd/img@unstick-b (step 2, created)"), "{s}");
        assert!(s.contains("  rbd/img@unstick-d (step 4, step interrupted: may exist)"), "{s}");
        assert!(!s.contains("  rbd/img@unstick-a ") && !s.contains("  rbd/img@unstick-c "), "{s}");
    }
}
