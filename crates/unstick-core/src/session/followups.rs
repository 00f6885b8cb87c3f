//! What a postmortem owes its reader after the timeline: what the session left in place ("left
//! to clean up") and which clock its times are on. Read from the postmortem's own actions, undos
//! and backups (the commands as the session log holds them: the request as sent, `ceph … osd
//! blocklist add ADDR …`, `PATCH v1 nodes NODE {…}`, or the console's summary of it).

use jiff::{SignedDuration, Timestamp};

use super::log::Mode;
use super::postmortem::Postmortem;

/// How long Ceph keeps a blocklist entry added without an expiry (`mon_osd_blocklist_default_expire`).
const BLOCKLIST_DEFAULT_EXPIRY: SignedDuration = SignedDuration::from_secs(3600);

const BLOCKLIST_ADD: &str = "osd blocklist add ";
const BLOCKLIST_RM: &str = "osd blocklist rm ";
const OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";

/// The word after `marker` in `command` (`10.0.0.9:0/77` after `osd blocklist add `).
fn after<'a>(command: &'a str, marker: &str) -> Option<&'a str> {
    command.split_once(marker).and_then(|(_, rest)| rest.split_whitespace().next())
}

/// `(node, tainted)` of a write to a node's out-of-service taint: the console's summary
/// (`taint node N …`, `untaint node N …`) or the request as sent (`PATCH v1 nodes N {…}`, whose
/// body names the taint when adding it).
fn taint(command: &str) -> Option<(&str, bool)> {
    if let Some(n) = after(command, "untaint node ") {
        return Some((n, false));
    }
    if let Some(n) = after(command, "taint node ") {
        return Some((n, true));
    }
    let node = after(command, " nodes ")?;
    Some((node, command.contains(OUT_OF_SERVICE)))
}

/// One line per thing still in place at the end of the log: an out-of-service taint not removed
/// since, a blocklist entry not removed (with when Ceph expires it), each snapshot and backup file
/// kept. Oldest first within each kind.
pub(super) fn left_to_clean_up(pm: &Postmortem) -> Vec<String> {
    // every successful write, undos included, in order: (time, command)
    let mut done: Vec<(Timestamp, &str)> =
        pm.actions.iter().filter(|a| a.ok).map(|a| (a.time, a.command.as_str())).collect();
    done.extend(pm.undos.iter().filter(|u| u.ok).map(|u| (u.time, u.command.as_str())));
    done.sort_by_key(|(t, _)| *t);
    let later = |t: Timestamp| done.iter().filter(move |(u, _)| *u >= t).map(|(_, c)| *c);
    let mut out = Vec::new();
    for (t, c) in &done {
        if let Some((node, true)) = taint(c)
            && !later(*t).any(|c| taint(c) == Some((node, false)))
        {
            out.push(format!(
                "node {node} still has the out-of-service taint (since {}): remove it once the node is back and clean (`kubectl taint node {node} {OUT_OF_SERVICE}-`)",
                t.strftime("%H:%M:%SZ")
            ));
        }
        if let Some(addr) = after(c, BLOCKLIST_ADD)
            && !later(*t).any(|c| after(c, BLOCKLIST_RM) == Some(addr))
        {
            let expiry = *t + BLOCKLIST_DEFAULT_EXPIRY;
            out.push(format!(
                "blocklist entry {addr} (added {}, Ceph drops it at {} unless removed: `ceph osd blocklist rm {addr}`)",
                t.strftime("%H:%M:%SZ"),
                expiry.strftime("%H:%M:%SZ")
            ));
        }
    }
    for b in &pm.backups {
        if let Some(snap) = &b.snapshot {
            out.push(format!("snapshot {snap} kept (delete when no longer needed: `rbd snap rm {snap}`)"));
        }
        out.extend(b.paths.iter().map(|p| format!("backup file {p} kept")));
    }
    out
}

/// Which clock the postmortem's times are on: always the real (wall) clock, the journal's; a
/// training session's simulation ran faster, and durations inside its step details (Wait
/// timeouts, Verify times) count simulated seconds.
pub(super) fn clock(mode: Option<Mode>) -> &'static str {
    match mode {
        Some(Mode::Training) => {
            "real time (UTC); training: the simulation's clock ran faster, and durations inside step details (Wait timeouts, Verify times) and the debrief's 'simulated' are simulated seconds"
        }
        _ => "real time (UTC)",
    }
}

#[cfg(test)]
mod tests {
    use super::super::log::{SessionEvent, SessionRecord, SessionReport};
    use super::super::redact::Redactor;

    fn at(min: i64, event: SessionEvent) -> (usize, SessionRecord) {
        let time = jiff::Timestamp::from_second(1_800_000_000 + min * 60).unwrap();
        (0, SessionRecord { v: 1, time, session: "s".into(), event })
    }

    fn action(step: &str, command: &str, ok: bool) -> SessionEvent {
        SessionEvent::Action {
            step_id: step.into(),
            command: command.into(),
            ok,
            outcome: "exit 0".into(),
            exit_code: Some(0),
            api_status: None,
            duration_ms: 5,
            sent: None,
        }
    }

    fn confirmed(step: &str) -> SessionEvent {
        SessionEvent::Confirmation {
            step_id: step.into(),
            command: "c".into(),
            objects: vec![],
            reversible: true,
            inverse: "i".into(),
            accepted: true,
        }
    }

    #[test]
    fn the_export_says_what_is_left_when_the_service_came_back_and_what_was_never_sent() {
        let records = vec![
            at(0, SessionEvent::Backup { paths: vec!["/b/pv.yaml".into()], snapshot: Some("k8s/img@u-1".into()) }),
            at(1, confirmed("p/2")),
            at(
                1,
                action(
                    "p/2",
                    r#"PATCH v1 nodes worker-7 {"spec":{"taints":[{"key":"node.kubernetes.io/out-of-service"}]}}"#,
                    true,
                ),
            ),
            at(
                1,
                action(
                    "p/2b",
                    r#"PATCH v1 nodes worker-8 {"spec":{"taints":[{"key":"node.kubernetes.io/out-of-service"}]}}"#,
                    true,
                ),
            ),
            at(3, action("p/2c", r#"PATCH v1 nodes worker-8 {"spec":{"taints":[]}}"#, true)),
            at(2, confirmed("p/3")),
            at(2, action("p/3", "ceph --rados_osd_op_timeout 10 osd blocklist add 10.0.0.9:0/77 --format json", true)),
            at(3, confirmed("p/4")),
            at(4, action("p/5", "ceph osd blocklist add 10.0.0.8:0/1", true)),
            at(5, action("p/6", "ceph osd blocklist rm 10.0.0.8:0/1", true)),
            at(6, SessionEvent::Restored { finding: "f".into(), pod: "shop/api-0".into() }),
            at(7, SessionEvent::Restored { finding: "g".into(), pod: "shop/api-1".into() }),
        ];
        let report = SessionReport { path: "s.jsonl".into(), records, problems: vec![] };
        let md = super::super::export::render("s", &report, super::super::Format::Markdown, &Redactor::builtin());
        assert!(md.contains("| Service restored (UTC) | 2027-01-15 08:06:00 (pod shop/api-0 Running) |"), "{md}");
        assert!(md.contains("node worker-7 still has the out-of-service taint"), "{md}");
        assert!(!md.contains("node worker-8 still"), "untainted since: {md}");
        assert!(md.contains("blocklist entry 10.0.0.9:0/77 (added 08:02:00Z, Ceph drops it at 09:02:00Z"), "{md}");
        assert!(!md.contains("blocklist entry 10.0.0.8:0/1"), "removed since: {md}");
        assert!(md.contains("snapshot k8s/img@u-1 kept"), "{md}");
        assert!(md.contains("ran `rbd snap create k8s/img@u-1`"), "{md}");
        // p/4 was confirmed and nothing was sent for it
        assert!(md.contains("| Confirmations accepted | 2 |"), "{md}");
        assert!(md.contains("| Confirmations accepted, then refused before sending | 1 |"), "{md}");
        assert!(md.contains("| p/4 | accepted, not sent (refused by the re-check) |"), "{md}");
    }
}
