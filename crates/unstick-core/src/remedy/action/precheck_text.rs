//! One-line texts of the live facts that [`super::compare`] puts in a [`super::Drift`].

use super::*;

pub(super) fn watcher_text(w: &[Watcher], live: &LiveState) -> String {
    if w.is_empty() {
        return "none".into();
    }
    w.iter()
        .map(|w| {
            let node = EntityAddr::parse(&w.address)
                .map(|a| {
                    live.nodes_at(a.ip).iter().map(|n| format!("{} Ready={}", n.name, n.ready)).collect::<Vec<_>>()
                })
                .unwrap_or_default();
            if node.is_empty() { w.address.clone() } else { format!("{} ({})", w.address, node.join(", ")) }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn addresses(w: &[Watcher]) -> Vec<String> {
    let mut v: Vec<String> = w.iter().map(|w| w.address.clone()).collect();
    v.sort();
    v
}

pub(super) fn list_text(v: &[String]) -> String {
    if v.is_empty() { "none".into() } else { v.join(", ") }
}

pub(super) fn lock_text(l: &[Lock]) -> String {
    list_text(&lock_keys(l))
}

pub(super) fn lock_keys(l: &[Lock]) -> Vec<String> {
    let mut v: Vec<String> = l.iter().map(|l| format!("{} by {} at {}", l.id, l.locker, l.address)).collect();
    v.sort();
    v
}

pub(super) fn pod_text(p: &PodFact) -> String {
    match &p.uid {
        None => "absent".into(),
        Some(uid) => format!(
            "uid {uid}{}, node {}{}",
            if p.terminating { ", Terminating" } else { "" },
            p.node.as_deref().unwrap_or("-"),
            if p.finalizers.is_empty() { String::new() } else { format!(", finalizers {}", p.finalizers.join(",")) }
        ),
    }
}

pub(super) fn va_text(v: &VaFact) -> String {
    if !v.present {
        return "absent".into();
    }
    format!("node {}{}, finalizers {}", v.node, if v.deleting { ", deleting" } else { "" }, list_text(&v.finalizers))
}

pub(super) fn mount_what(m: &MountRef) -> String {
    format!("daemonset {}/{} container {} mount {}", m.namespace, m.daemonset, m.container, m.mount_path)
}

pub(super) fn mount_text(m: &MountFact) -> String {
    if !m.present {
        return "absent".into();
    }
    let strategy = m.strategy.as_deref().map(|s| format!("; updateStrategy {s}")).unwrap_or_default();
    format!("mountPropagation {}{strategy}", m.propagation.as_deref().unwrap_or("(unset)"))
}

pub(super) fn blocklist_text(b: &[BlocklistEntry]) -> String {
    let mut v: Vec<String> = b.iter().map(|e| e.text().to_string()).collect();
    v.sort();
    list_text(&v)
}
