//! Constructors that turn the console's own values (confirmations, journal outcomes and backups)
//! into session [`SessionEvent`]s, so the UI logs exactly what it showed and journaled.

use super::log::{Mode, SessionEvent, Writes};
use crate::remedy::action::Inverse;
use crate::remedy::journal::{ActionOutcome, BackupRecord, outcome_text};
use crate::remedy::run::Confirmation;

/// `the inverse action's summary`, or `none — <why>` (as the confirm popup shows it).
pub fn inverse_text(i: &Inverse) -> String {
    match i {
        Inverse::Action { action } => action.summary(),
        Inverse::Irreversible { why } => format!("none — {why}"),
    }
}

/// An object in the console's one spelling, `Kind [namespace/]name` ([`ObjectRef::label`]): the
/// `kind/namespace/name` and `rbd image pool/img` forms older versions logged for confirmations
/// are rewritten (`pod/shop/api-0` → `Pod shop/api-0`, `node/w2 (status)` → `Node w2`); any other
/// text is returned as is.
///
/// [`ObjectRef::label`]: crate::diagnose::ObjectRef::label
pub fn object_label(s: &str) -> String {
    let kinds = [
        ("pod/", "Pod"),
        ("pvc/", "PVC"),
        ("pv/", "PV"),
        ("node/", "Node"),
        ("volumeattachment/", "VolumeAttachment"),
        ("daemonset/", "DaemonSet"),
        ("rbd image ", "RbdImage"),
        ("blocklist entry ", "BlocklistEntry"),
        ("blocklist range ", "BlocklistEntry"),
    ];
    for (prefix, kind) in kinds {
        if let Some(rest) = s.strip_prefix(prefix) {
            let rest = rest.strip_suffix(" (status)").unwrap_or(rest);
            return format!("{kind} {rest}");
        }
    }
    s.to_string()
}

impl SessionEvent {
    /// A `start` event for this process: `context` is the kube context, scenario name or bundle
    /// path; `operator` is [`crate::remedy::journal::operator`], `version` is this crate's version.
    pub fn start_now(context: &str, mode: Mode, writes: Writes) -> Self {
        SessionEvent::Start {
            context: context.to_string(),
            operator: crate::remedy::journal::operator(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            mode,
            writes: Some(writes),
        }
    }

    /// A `confirmation` for a prepared [`Confirmation`]; `accepted` is false when cancelled.
    pub fn confirmation(c: &Confirmation, accepted: bool) -> Self {
        SessionEvent::Confirmation {
            step_id: c.step_id.clone(),
            command: c.command.clone(),
            objects: c.objects.clone(),
            reversible: c.reversible,
            inverse: inverse_text(&c.inverse),
            accepted,
        }
    }

    /// An `action` from the journaled [`ActionOutcome`] of a step; `command` is the confirmed command,
    /// `sent` the request as sent ([`crate::remedy::action::executor::ExecResult::sent`]).
    pub fn action(step_id: &str, command: &str, sent: Option<&str>, o: &ActionOutcome) -> Self {
        SessionEvent::Action {
            sent: sent.map(str::to_string),
            step_id: step_id.to_string(),
            command: command.to_string(),
            ok: o.ok,
            outcome: outcome_text(o),
            exit_code: o.exit_code,
            api_status: o.api_status,
            duration_ms: o.duration_ms,
        }
    }

    /// An `undo` of journal step `step`, from the undoing action's [`ActionOutcome`].
    pub fn undo(step: u32, command: &str, o: &ActionOutcome) -> Self {
        SessionEvent::Undo { step, command: command.to_string(), ok: o.ok, outcome: outcome_text(o) }
    }

    /// A `backup` from a journal [`BackupRecord`]: every file path (the `rbd export` copy too) and
    /// the snapshot.
    pub fn backup(b: &BackupRecord) -> Self {
        let mut paths: Vec<String> = b.files.iter().map(|f| f.path.display().to_string()).collect();
        if let Some(e) = &b.export {
            paths.push(e.path.display().to_string());
        }
        SessionEvent::Backup { paths, snapshot: b.snapshot.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::ObjectRef;
    use crate::remedy::journal::FileRecord;

    #[test]
    fn one_spelling_of_objects() {
        assert_eq!(object_label("pod/shop/api-0"), "Pod shop/api-0");
        assert_eq!(object_label("node/w2 (status)"), "Node w2");
        assert_eq!(object_label("volumeattachment/csi-1"), "VolumeAttachment csi-1");
        assert_eq!(object_label("rbd image replicapool/img"), "RbdImage replicapool/img");
        assert_eq!(object_label("Pod shop/api-0"), "Pod shop/api-0");
        // every label the console writes stays as it is
        let img = crate::model::ImageRef { pool: "p".into(), namespace: String::new(), image: "i".into() };
        for o in [ObjectRef::pod("a/b"), ObjectRef::node("n"), ObjectRef::va("v"), ObjectRef::image(&img)] {
            assert_eq!(object_label(&o.label()), o.label());
        }
    }

    #[test]
    fn outcome_and_backup_events() {
        let o = ActionOutcome {
            step: 3,
            ok: false,
            exit_code: Some(16),
            api_status: None,
            stderr: "busy".into(),
            duration_ms: 40,
        };
        match SessionEvent::action("unmap-busy/4", "rbd unmap /dev/rbd3", None, &o) {
            SessionEvent::Action { ok, outcome, exit_code, duration_ms, .. } => {
                assert!(!ok);
                assert_eq!(outcome, "exit 16: busy");
                assert_eq!((exit_code, duration_ms), (Some(16), 40));
            }
            e => panic!("{e:?}"),
        }
        let f = |p: &str| FileRecord { path: p.into(), bytes: 1, sha256: String::new() };
        let b =
            BackupRecord { files: vec![f("/b/pv.yaml")], snapshot: Some("p/i@s".into()), export: Some(f("/b/i.raw")) };
        assert_eq!(
            SessionEvent::backup(&b),
            SessionEvent::Backup {
                paths: vec!["/b/pv.yaml".into(), "/b/i.raw".into()],
                snapshot: Some("p/i@s".into())
            }
        );
        match SessionEvent::start_now("ctx", Mode::Training, Writes::DryRun) {
            SessionEvent::Start { version, operator, mode, writes, .. } => {
                assert_eq!((mode, writes), (Mode::Training, Some(Writes::DryRun)));
                assert_eq!(version, env!("CARGO_PKG_VERSION"));
                assert!(operator.contains('@'));
            }
            e => panic!("{e:?}"),
        }
    }
}
