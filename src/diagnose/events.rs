//! Events as the rules read them: message decoded (Go byte slices) and sanitized once, with the
//! involved object, count and times; plus the message matchers for the seeds' texts.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Event;

use crate::text::clean_message;

/// One event, pre-digested. Borrows from the [`Event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventView<'a> {
    /// `involvedObject.kind` (`Pod`, `Node`, ...).
    pub kind: &'a str,
    /// `involvedObject` as `namespace/name` (or `name` when cluster-scoped).
    pub object: String,
    /// `involvedObject.uid`, when set: tells a pod from an earlier pod of the same name.
    pub uid: Option<&'a str>,
    /// `reason` (`FailedMount`, `FailedAttachVolume`, `Killing`).
    pub reason: &'a str,
    /// `type` (`Warning`, `Normal`).
    pub type_: &'a str,
    /// Message after [`clean_message`].
    pub message: String,
    /// `count` (1 when absent), or `series.count` when larger.
    pub count: i32,
    /// `firstTimestamp` (else `eventTime`, else `lastTimestamp`).
    pub first: Option<Timestamp>,
    /// `lastTimestamp` (else `series.lastObservedTime`, `eventTime`, `firstTimestamp`, creation time).
    pub last: Option<Timestamp>,
    /// `source.host` (the node whose kubelet reported it).
    pub host: Option<&'a str>,
}

/// [`clean_message`], with a fast path for the common plain-ASCII message that has nothing to
/// decode or strip.
fn clean(m: &str) -> String {
    if m.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'[') {
        m.trim().to_string()
    } else {
        clean_message(m)
    }
}

impl<'a> EventView<'a> {
    /// Digests one event.
    pub fn of(e: &'a Event) -> EventView<'a> {
        let o = &e.involved_object;
        let name = o.name.as_deref().unwrap_or("");
        let object = match o.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
            _ => name.to_string(),
        };
        let series = e.series.as_ref();
        let last = e
            .last_timestamp
            .as_ref()
            .map(|t| t.0)
            .or_else(|| series.and_then(|s| s.last_observed_time.as_ref()).map(|t| t.0))
            .or_else(|| e.event_time.as_ref().map(|t| t.0))
            .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
            .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0));
        let first = e
            .first_timestamp
            .as_ref()
            .map(|t| t.0)
            .or_else(|| e.event_time.as_ref().map(|t| t.0))
            .or(last);
        let count = e.count.unwrap_or(1).max(series.and_then(|s| s.count).unwrap_or(0)).max(1);
        EventView {
            kind: o.kind.as_deref().unwrap_or(""),
            object,
            uid: o.uid.as_deref().filter(|u| !u.is_empty()),
            reason: e.reason.as_deref().unwrap_or(""),
            type_: e.type_.as_deref().unwrap_or(""),
            message: clean(e.message.as_deref().unwrap_or("")),
            count,
            first,
            last,
            host: e.source.as_ref().and_then(|s| s.host.as_deref()).filter(|h| !h.is_empty()),
        }
    }

    /// `reason (xN): message`, the evidence line.
    pub fn line(&self) -> String {
        let count = if self.count > 1 { format!(" (x{})", self.count) } else { String::new() };
        crate::text::sanitize(&format!("{} {}{count} on {} {}: {}", self.type_, self.reason, self.kind, self.object, self.message))
    }

    /// The quoted volume name after `for volume "`, if any (`Multi-Attach error for volume "user-pv"`).
    pub fn volume_name(&self) -> Option<&str> {
        quoted_after(&self.message, "for volume \"")
    }

    /// The quoted node after `on node "`, if any (kubelet's UnmountDevice message).
    pub fn node_name(&self) -> Option<&str> {
        quoted_after(&self.message, "on node \"")
    }

    /// The first `/dev/rbdN` (or `/dev/nbdN`) in the message.
    pub fn device(&self) -> Option<&str> {
        for prefix in ["/dev/rbd", "/dev/nbd"] {
            if let Some(i) = self.message.find(prefix) {
                let rest = &self.message[i..];
                let end = prefix.len() + rest[prefix.len()..].bytes().take_while(u8::is_ascii_digit).count();
                if end > prefix.len() {
                    return Some(&rest[..end]);
                }
            }
        }
        None
    }
}

fn quoted_after<'a>(s: &'a str, marker: &str) -> Option<&'a str> {
    let start = s.find(marker)? + marker.len();
    let rest = &s[start..];
    let end = rest.find('"')?;
    Some(&rest[..end]).filter(|v| !v.is_empty())
}

/// `Multi-Attach error for volume "X" Volume is already used by pod(s) ...` or `... exclusively
/// attached to one node ...` (attach-detach controller, seeds 001 and 002).
pub fn is_multi_attach(e: &EventView<'_>) -> bool {
    e.message.contains("Multi-Attach error")
}

/// `rbd image POOL/IMG is still being used` (kubelet WaitForAttach with a watcher present, seed 002).
pub fn is_still_being_used(e: &EventView<'_>) -> bool {
    e.message.contains("is still being used")
}

/// `rbd: image IMG is locked by other nodes` (in-tree RBD, seed 000).
pub fn is_locked_by_other_nodes(e: &EventView<'_>) -> bool {
    e.message.contains("is locked by other nodes")
}

/// `rbd: failed to unmap device /dev/rbdN, error exit status 16` or a decoded `unmap failed: (16)
/// Device or resource busy` (seed 003).
pub fn is_unmap_busy(e: &EventView<'_>) -> bool {
    let m = &e.message;
    m.contains("unmap")
        && (m.contains("exit status 16") || m.contains("(16) Device or resource busy"))
}

/// ceph-csi refusing a second concurrent operation on one volume: `an operation with the given
/// Volume ID ... already exists` (seed 004's same-node restage).
pub fn is_operation_pending(e: &EventView<'_>) -> bool {
    e.message.contains("operation with the given Volume ID") && e.message.contains("already exists")
}

/// A kubelet/attach failure event about a volume (`FailedMount`, `FailedAttachVolume`, ...).
pub fn is_volume_failure(e: &EventView<'_>) -> bool {
    matches!(
        e.reason,
        "FailedMount" | "FailedAttachVolume" | "FailedMapVolume" | "FailedUnMount" | "FailedUnmount" | "FailedDetachVolume"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn digests_seed_003_event() {
        let snap = fixtures::incidents();
        let e = snap.events.iter().map(|e| EventView::of(e)).find(is_unmap_busy).expect("seed 003 event");
        assert_eq!(e.object, "incident-003/mysql-0");
        assert_eq!(e.count, 30);
        assert_eq!(e.device(), Some("/dev/rbd3"));
        assert_eq!(e.volume_name(), Some("pvc-9984bdab-9c79-11e9-b8ba-fa163ed7c802"));
        assert!(e.message.contains("(16) Device or resource busy"), "{}", e.message);
        assert!(!e.message.contains('\u{1b}'));
    }

    #[test]
    fn matchers_do_not_fire_on_look_alikes() {
        let check = |m: &str, f: &dyn Fn(&EventView<'_>) -> bool| {
            let e = fixtures::event("n", "p", "FailedMount", m, 1, "2026-11-22T02:00:00Z");
            f(&EventView::of(&e))
        };
        assert!(!check("rbd: failed to unmap device /dev/rbd3, error exit status 2", &is_unmap_busy));
        assert!(!check("MountVolume failed: exit status 16", &is_unmap_busy));
        assert!(check("rbd: unmap failed: (16) Device or resource busy", &is_unmap_busy));
        assert!(!check("AttachVolume.Attach succeeded for volume \"pv\"", &is_multi_attach));
        assert!(check("no device here /dev/rbd", &|e| e.device().is_none()));
        assert!(check("x for volume \"\" y", &|e| e.volume_name().is_none()));
        // The fast path and the full cleaning agree on plain text; escapes still go.
        assert!(check("  plain  ", &|e| e.message == "plain"));
        assert!(check("a\u{1b}[31mb", &|e| e.message == "ab"));
    }
}
