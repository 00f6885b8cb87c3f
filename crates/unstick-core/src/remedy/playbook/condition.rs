//! Conditions that Wait and Verify steps poll live: a lock gone from `rbd lock ls`, a watcher gone
//! from `rbd status`, a pod or VolumeAttachment gone, a blocklist entry gone, a mountPropagation
//! value in effect, a taint present or absent.

use std::net::IpAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::ImageRef;
use crate::model::ceph::EntityAddr;
use crate::remedy::action::precheck::{MountRef, PrecheckError, Reader, Scope, read_live};

/// A live condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Condition {
    /// `rbd lock ls` has no lock with this id.
    LockGone {
        /// The image.
        image: ImageRef,
        /// Lock id.
        lock_id: String,
    },
    /// `rbd status` has no watcher with this exact address.
    WatcherGone {
        /// The image.
        image: ImageRef,
        /// `IP:port/nonce`.
        addr: String,
    },
    /// `rbd status` has no watcher from this IP.
    NoWatcherFrom {
        /// The image.
        image: ImageRef,
        /// Host IP.
        ip: IpAddr,
    },
    /// `rbd status` has no watcher at all.
    NoWatchers {
        /// The image.
        image: ImageRef,
    },
    /// The pod with this UID no longer exists (a new pod of the same name does not count).
    PodGone {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// UID.
        uid: String,
    },
    /// The VolumeAttachment no longer exists.
    VaGone {
        /// Name.
        name: String,
    },
    /// No blocklist entry with this text.
    BlocklistGone {
        /// Entry as printed.
        entry: String,
    },
    /// The mount's `mountPropagation` equals `value`.
    MountPropagation {
        /// The mount.
        mount: MountRef,
        /// Expected value (`None` = unset).
        value: Option<String>,
    },
    /// The node's `status.volumesAttached` no longer lists `volume` (the attach-detach controller
    /// detached it; in-tree volumes have no VolumeAttachment).
    NotAttached {
        /// Node.
        node: String,
        /// The volume's unique name (`kubernetes.io/rbd/<pool>:<image>`).
        volume: String,
    },
    /// The node has (or has not) the out-of-service taint.
    OutOfService {
        /// Node.
        node: String,
        /// Expected presence.
        present: bool,
    },
}

impl Condition {
    /// What is read to evaluate it.
    pub fn scope(&self) -> Scope {
        let mut s = Scope::default();
        match self {
            Condition::LockGone { image, .. }
            | Condition::WatcherGone { image, .. }
            | Condition::NoWatcherFrom { image, .. }
            | Condition::NoWatchers { image } => s.image = Some(image.clone()),
            Condition::PodGone { namespace, name, .. } => s.pods.push((namespace.clone(), name.clone())),
            Condition::VaGone { name } => s.volume_attachments.push(name.clone()),
            Condition::BlocklistGone { .. } => s.blocklist = true,
            Condition::MountPropagation { mount, .. } => s.mounts.push(mount.clone()),
            Condition::OutOfService { node, .. } | Condition::NotAttached { node, .. } => s.nodes.push(node.clone()),
        }
        s
    }

    /// A one-line description (`lock kubelet_lock_magic_node1 gone from replicapool/img`).
    pub fn describe(&self) -> String {
        match self {
            Condition::LockGone { image, lock_id } => format!("lock {lock_id} gone from {image}"),
            Condition::WatcherGone { image, addr } => format!("watcher {addr} gone from {image}"),
            Condition::NoWatcherFrom { image, ip } => format!("no watcher from {ip} on {image}"),
            Condition::NoWatchers { image } => format!("no watcher on {image}"),
            Condition::PodGone { namespace, name, .. } => format!("pod {namespace}/{name} gone"),
            Condition::VaGone { name } => format!("volumeattachment {name} gone"),
            Condition::BlocklistGone { entry } => format!("blocklist entry {entry} gone"),
            Condition::MountPropagation { mount, value } => format!(
                "{}/{} mount {} has mountPropagation {}",
                mount.namespace,
                mount.daemonset,
                mount.mount_path,
                value.as_deref().unwrap_or("(unset)")
            ),
            Condition::OutOfService { node, present } => {
                format!("node {node} {} the out-of-service taint", if *present { "has" } else { "does not have" })
            }
            Condition::NotAttached { node, volume } => {
                format!("node {node} no longer lists {volume} in volumesAttached")
            }
        }
    }
}

/// Reads the state live and tells whether `cond` holds, with a line describing what was seen.
pub async fn evaluate(r: &Reader, cond: &Condition) -> Result<(bool, String), PrecheckError> {
    let live = read_live(r, &cond.scope()).await?;
    let watchers = live.watchers.clone().unwrap_or_default();
    let addrs = || {
        let v: Vec<&str> = watchers.iter().map(|w| w.address.as_str()).collect();
        if v.is_empty() { "none".to_string() } else { v.join(", ") }
    };
    Ok(match cond {
        Condition::LockGone { lock_id, .. } => {
            let locks = live.locks.unwrap_or_default();
            let held = locks.iter().any(|l| l.id == *lock_id);
            (
                !held,
                format!(
                    "locks: {}",
                    if locks.is_empty() {
                        "none".into()
                    } else {
                        locks.iter().map(|l| l.id.clone()).collect::<Vec<_>>().join(", ")
                    }
                ),
            )
        }
        Condition::WatcherGone { addr, .. } => {
            (!watchers.iter().any(|w| w.address == *addr), format!("watchers: {}", addrs()))
        }
        Condition::NoWatcherFrom { ip, .. } => (
            !watchers.iter().any(|w| EntityAddr::parse(&w.address).is_some_and(|a| a.ip == *ip)),
            format!("watchers: {}", addrs()),
        ),
        Condition::NoWatchers { .. } => (watchers.is_empty(), format!("watchers: {}", addrs())),
        Condition::PodGone { namespace, name, uid } => {
            let p = live.pod(namespace, name).and_then(|p| p.uid.clone());
            match p {
                Some(u) if u == *uid => (false, format!("pod {namespace}/{name} still exists")),
                Some(u) => (true, format!("pod {namespace}/{name} was replaced (uid {u})")),
                None => (true, format!("pod {namespace}/{name} is gone")),
            }
        }
        Condition::VaGone { name } => {
            let present = live.va(name).is_some_and(|v| v.present);
            (!present, format!("volumeattachment {name} {}", if present { "still exists" } else { "is gone" }))
        }
        Condition::BlocklistGone { entry } => {
            let b = live.blocklist.unwrap_or_default();
            let present = b.iter().any(|e| e.text() == entry);
            (
                !present,
                format!(
                    "blocklist has {} entries{}",
                    b.len(),
                    if present { format!(", including {entry}") } else { String::new() }
                ),
            )
        }
        Condition::MountPropagation { mount, value } => {
            let f = live.mount(mount);
            let cur = f.and_then(|f| f.propagation.clone());
            let present = f.is_some_and(|f| f.present);
            (present && cur == *value, format!("mountPropagation {}", cur.as_deref().unwrap_or("(unset)")))
        }
        Condition::NotAttached { node, volume } => {
            let listed = live.node(node).is_some_and(|n| n.attached.iter().any(|a| a == volume));
            (
                !listed,
                format!(
                    "node {node} volumesAttached {} {volume}",
                    if listed { "still lists" } else { "no longer lists" }
                ),
            )
        }
        Condition::OutOfService { node, present } => {
            let has = live.node(node).is_some_and(|n| n.out_of_service);
            (has == *present, format!("node {node} out-of-service taint {}", if has { "present" } else { "absent" }))
        }
    })
}

/// One condition of a Verify step, checked: whether it holds and what was seen (or, when the
/// read failed, why it could not be checked: the condition then does not hold).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The condition, as [`Condition::describe`] says it.
    pub condition: String,
    /// It holds.
    pub holds: bool,
    /// What the read showed, or the read's error.
    pub seen: String,
}

impl Checked {
    /// `<condition>: yes|NO (<seen>)`, as the journal records a Verify step.
    pub fn journal_line(&self) -> String {
        format!("{}: {} ({})", self.condition, if self.holds { "yes" } else { "NO" }, self.seen)
    }

    /// The journal's text of a whole Verify step: every condition's line, `; `-separated.
    pub fn journal_text(all: &[Checked]) -> String {
        all.iter().map(Checked::journal_line).collect::<Vec<_>>().join("; ")
    }
}

/// One poll of a Wait step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitStatus {
    /// The condition holds; the runner moved on.
    Met(String),
    /// Not yet; `remaining` until the timeout (the visible countdown).
    Pending {
        /// What was seen.
        seen: String,
        /// Time left.
        remaining: Duration,
    },
    /// The timeout passed (journaled); the runner moved on.
    TimedOut(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_and_text() {
        let img = ImageRef::new("replicapool", "i");
        let c = Condition::LockGone { image: img.clone(), lock_id: "l".into() };
        assert_eq!(c.scope().image, Some(img.clone()));
        assert_eq!(c.describe(), "lock l gone from replicapool/i");
        assert!(Condition::BlocklistGone { entry: "x".into() }.scope().blocklist);
        let j = serde_json::to_value(Condition::VaGone { name: "v".into() }).unwrap();
        assert_eq!(j["kind"], "va-gone");
    }
}
