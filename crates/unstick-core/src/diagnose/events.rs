//! Events as the rules read them: message decoded (Go byte slices) and sanitized once, with the
//! involved object, count and times; plus the message matchers for the seeds' texts.

use std::borrow::Cow;
use std::sync::Arc;

use crate::model::objects::Event;
use jiff::Timestamp;

use crate::model::ImageRef;
use crate::text::clean_message;

/// One event, pre-digested: what is read of it more than once (its object's `namespace/name`,
/// count, times, cleaned message) next to the event itself, whose other fields it reads in place
/// (kept between diagnoses: the console digests an event once, when it arrives, [`super::Index`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EventView {
    event: Arc<Event>,
    /// `involvedObject` as `namespace/name` (or `name` when cluster-scoped).
    pub object: String,
    /// The message after [`clean_message`], when that differs from the event's own.
    cleaned: Option<Box<str>>,
    /// `count` (1 when absent), or `series.count` when larger.
    pub count: i32,
    /// `firstTimestamp` (else `eventTime`, else `lastTimestamp`).
    pub first: Option<Timestamp>,
    /// `lastTimestamp` (else `series.lastObservedTime`, `eventTime`, `firstTimestamp`, creation time).
    pub last: Option<Timestamp>,
}

/// [`clean_message`], with a fast path for the common plain-ASCII message that has nothing to
/// decode or strip.
fn clean(m: &str) -> String {
    if m.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'[') { m.trim().to_string() } else { clean_message(m) }
}

impl EventView {
    /// Digests one event.
    pub fn of(e: &Arc<Event>) -> EventView {
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
        let first = e.first_timestamp.as_ref().map(|t| t.0).or_else(|| e.event_time.as_ref().map(|t| t.0)).or(last);
        let count = e.count.unwrap_or(1).max(series.and_then(|s| s.count).unwrap_or(0)).max(1);
        let raw = e.message.as_deref().unwrap_or("");
        let cleaned = clean(raw);
        EventView {
            event: e.clone(),
            object,
            cleaned: (cleaned != raw).then(|| cleaned.into_boxed_str()),
            count,
            first,
            last,
        }
    }

    /// The event digested.
    pub fn event(&self) -> &Arc<Event> {
        &self.event
    }

    /// `involvedObject.kind` (`Pod`, `Node`, ...; empty when absent).
    pub fn kind(&self) -> &str {
        self.event.involved_object.kind.as_deref().unwrap_or("")
    }

    /// `involvedObject.uid`, when set: tells a pod from an earlier pod of the same name.
    pub fn uid(&self) -> Option<&str> {
        self.event.involved_object.uid.as_deref().filter(|u| !u.is_empty())
    }

    /// `reason` (`FailedMount`, `FailedAttachVolume`, `Killing`; empty when absent).
    pub fn reason(&self) -> &str {
        self.event.reason.as_deref().unwrap_or("")
    }

    /// `type` (`Warning`, `Normal`; empty when absent).
    pub fn type_(&self) -> &str {
        self.event.type_.as_deref().unwrap_or("")
    }

    /// The message after [`clean_message`].
    pub fn message(&self) -> &str {
        self.cleaned.as_deref().unwrap_or_else(|| self.event.message.as_deref().unwrap_or(""))
    }

    /// The message without any whitespace: what the matchers also look in, so that a message
    /// wrapped by a terminal or a web page (a line break inside a word or a name) still matches.
    /// Made when asked (it is read only when the message itself does not match).
    pub fn compact(&self) -> String {
        self.message().split_whitespace().collect()
    }

    /// `source.host` (the node whose kubelet reported it), when set.
    pub fn host(&self) -> Option<&str> {
        self.event.source.as_ref().and_then(|s| s.host.as_deref()).filter(|h| !h.is_empty())
    }

    /// `reason (xN): message`, the evidence line.
    pub fn line(&self) -> String {
        let count = if self.count > 1 { format!(" (x{})", self.count) } else { String::new() };
        crate::text::sanitize(&format!(
            "{} {}{count} on {} {}: {}",
            self.type_(),
            self.reason(),
            self.kind(),
            self.object,
            self.message()
        ))
    }

    /// True when the message contains `needle`, also across a wrap (whitespace ignored).
    pub fn has(&self, needle: &str) -> bool {
        self.message().contains(needle) || self.compact().contains(&needle.split_whitespace().collect::<String>())
    }

    /// The quoted volume name after `for volume "`, if any (`Multi-Attach error for volume "user-pv"`).
    pub fn volume_name(&self) -> Option<Cow<'_, str>> {
        self.quoted_after("for volume \"")
    }

    /// The quoted node after `on node "`, if any (kubelet's UnmountDevice message).
    pub fn node_name(&self) -> Option<Cow<'_, str>> {
        self.quoted_after("on node \"")
    }

    /// The image spec of ceph-csi's own unmap error, `rbd: unmap for spec (<pool>/[<ns>/]<image>)
    /// failed (…)` (ceph/ceph-csi `internal/rbd/rbd_attach.go`); `None` when the spec is a device
    /// path or absent.
    pub fn unmap_spec(&self) -> Option<ImageRef> {
        let compact = self.compact();
        let start = compact.find("unmapforspec(")? + "unmapforspec(".len();
        let rest = &compact[start..];
        let spec = &rest[..rest.find(')')?];
        let parts: Vec<&str> = spec.split('/').collect();
        match parts.as_slice() {
            [pool, image] if !pool.is_empty() && !image.is_empty() => Some(ImageRef::new(*pool, *image)),
            [pool, ns, image] if !pool.is_empty() && !image.is_empty() && *pool != "dev" => {
                Some(ImageRef { pool: pool.to_string(), namespace: ns.to_string(), image: image.to_string() })
            }
            _ => None,
        }
    }

    /// The first `/dev/rbdN` (or `/dev/nbdN`) in the message (or, wrapped, in [`Self::compact`]).
    pub fn device(&self) -> Option<Cow<'_, str>> {
        device_in(self.message()).map(Cow::Borrowed).or_else(|| device_in(&self.compact()).map(|d| d.to_owned().into()))
    }

    /// A quoted value after `marker`; looked up in the wrapped-free [`Self::compact`] when the
    /// message itself has none or the value holds a line break (names hold no whitespace).
    fn quoted_after(&self, marker: &str) -> Option<Cow<'_, str>> {
        quoted_after(self.message(), marker).filter(|v| !v.contains(char::is_whitespace)).map(Cow::Borrowed).or_else(
            || {
                let marker: String = marker.split_whitespace().collect();
                quoted_after(&self.compact(), &marker).map(|v| v.to_owned().into())
            },
        )
    }
}

fn device_in(s: &str) -> Option<&str> {
    for prefix in ["/dev/rbd", "/dev/nbd"] {
        if let Some(i) = s.find(prefix) {
            let rest = &s[i..];
            let end = prefix.len() + rest[prefix.len()..].bytes().take_while(u8::is_ascii_digit).count();
            if end > prefix.len() {
                return Some(&rest[..end]);
            }
        }
    }
    None
}

fn quoted_after<'a>(s: &'a str, marker: &str) -> Option<&'a str> {
    let start = s.find(marker)? + marker.len();
    let rest = &s[start..];
    let end = rest.find('"')?;
    Some(&rest[..end]).filter(|v| !v.is_empty())
}

/// The attach-detach controller refusing to attach an RWO volume attached elsewhere (seeds 001 and
/// 002): up to 1.36 `Multi-Attach error for volume "X" Volume is already used by pod(s) ...` or
/// `... exclusively attached to one node and can't be attached to another`; from 1.37 the same
/// `FailedAttachVolume` event reads `Waiting for detach for volume "X" Volume is already used by
/// pod(s) ...` or `... exclusively attached to one node, waiting on detach before it can be
/// attached to another node` (kubernetes `pkg/controller/volume/attachdetach/reconciler`
/// `reportMultiAttachError`, kubernetes/kubernetes#138836; seen on the harness's 1.37.2).
pub fn is_multi_attach(e: &EventView) -> bool {
    e.has("Multi-Attach error") || e.has("Waiting for detach for volume")
}

/// `rbd image POOL/IMG is still being used` (kubelet WaitForAttach with a watcher present, seed 002).
pub fn is_still_being_used(e: &EventView) -> bool {
    e.has("is still being used")
}

/// In-tree RBD refusing a map because another node holds the lock: `rbd: image IMG is locked by
/// other nodes` (seed 000), or Kubernetes ≥ 1.8's `rbd: failed to lock image IMG (maybe locked by
/// other nodes), error exit status 22` (kubernetes/kubernetes `pkg/volume/rbd/disk_manager.go`).
pub fn is_locked_by_other_nodes(e: &EventView) -> bool {
    e.has("is locked by other nodes") || e.has("maybe locked by other nodes")
}

/// A map refused because this client is fenced: `rbd: map failed … (108) Cannot send after
/// transport endpoint shutdown` (in-tree `rbd_util.go` and ceph-csi `rbd_attach.go` wordings; 108
/// is ESHUTDOWN, what a blocklisted client gets). Other map failures (read-only filesystem,
/// unsupported image features) are not this.
pub fn is_fenced_map_failure(e: &EventView) -> bool {
    e.has("map failed") && (e.has("Cannot send after transport endpoint shutdown") || e.has("exit status 108"))
}

/// kubelet waiting on a VolumeAttachment that is being deleted: `volume attachment is being
/// deleted` (kubernetes/kubernetes `pkg/volume/csi/csi_attacher.go`).
pub fn is_attachment_being_deleted(e: &EventView) -> bool {
    e.has("volume attachment is being deleted")
}

/// `rbd: failed to unmap device /dev/rbdN, error exit status 16` or a decoded `unmap failed: (16)
/// Device or resource busy` (seed 003).
pub fn is_unmap_busy(e: &EventView) -> bool {
    e.has("unmap") && (e.has("exit status 16") || e.has("(16) Device or resource busy"))
}

/// ceph-csi refusing a second concurrent operation on one volume: `an operation with the given
/// Volume ID ... already exists` (seed 004's same-node restage).
pub fn is_operation_pending(e: &EventView) -> bool {
    e.has("operation with the given Volume ID") && e.has("already exists")
}

/// A kubelet/attach failure event about a volume (`FailedMount`, `FailedAttachVolume`, ...).
pub fn is_volume_failure(e: &EventView) -> bool {
    matches!(
        e.reason(),
        "FailedMount"
            | "FailedAttachVolume"
            | "FailedMapVolume"
            | "FailedUnMount"
            | "FailedUnmount"
            | "FailedDetachVolume"
    )
}

#[cfg(test)]
#[path = "events_field_tests.rs"]
mod field_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn digests_seed_003_event() {
        let snap = fixtures::incidents();
        let e = snap.events.iter().map(EventView::of).find(is_unmap_busy).expect("seed 003 event");
        assert_eq!(e.object, "incident-003/mysql-0");
        assert_eq!(e.count, 30);
        assert_eq!(e.device().as_deref(), Some("/dev/rbd3"));
        assert_eq!(e.volume_name().as_deref(), Some("pvc-9984bdab-9c79-11e9-b8ba-fa163ed7c802"));
        assert!(e.message().contains("(16) Device or resource busy"), "{}", e.message());
        assert!(!e.message().contains('\u{1b}'));
    }

    #[test]
    fn matchers_do_not_fire_on_look_alikes() {
        let check = |m: &str, f: &dyn Fn(&EventView) -> bool| {
            let e = fixtures::event("n", "p", "FailedMount", m, 1, "2026-11-22T02:00:00Z");
            f(&EventView::of(&e))
        };
        assert!(!check("rbd: failed to unmap device /dev/rbd3, error exit status 2", &is_unmap_busy));
        assert!(!check("MountVolume failed: exit status 16", &is_unmap_busy));
        assert!(check("rbd: unmap failed: (16) Device or resource busy", &is_unmap_busy));
        assert!(!check("AttachVolume.Attach succeeded for volume \"pv\"", &is_multi_attach));
        // 1.37.2's wording, as its attach-detach controller posted it on the harness (incident 001)
        assert!(check(
            "Waiting for detach for volume \"live-pv-001\" Volume is already used by pod(s) user-db-64b67cd57f-nvkzp",
            &is_multi_attach
        ));
        assert!(check(
            "Waiting for detach for volume \"pv1\" Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node",
            &is_multi_attach
        ));
        assert!(check("no device here /dev/rbd", &|e| e.device().is_none()));
        assert!(check("x for volume \"\" y", &|e| e.volume_name().is_none()));
        // The fast path and the full cleaning agree on plain text; escapes still go.
        assert!(check("  plain  ", &|e| e.message() == "plain"));
        assert!(check("a\u{1b}[31mb", &|e| e.message() == "ab"));
    }
}
