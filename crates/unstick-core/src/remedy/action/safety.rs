//! Safety rules, checked against the LIVE state just re-read ([`crate::remedy::action::precheck`]). The only way to
//! get an [`Approved`] action (which is what the executor takes) is [`approve`].
//!
//! Rules (issue 4, `harness/ceph.md`):
//! - never fence (blocklist / out-of-service taint) a node that is Ready, unless the operator types
//!   the node's name as an override;
//! - blocklist only an exact `IP:port/nonce`; a whole-host entry (no nonce) needs the entry typed as
//!   an override, and a whole-host entry for a loopback IP is refused outright (it is always the
//!   host this console runs on: it would cut off the console's own `rbd` calls);
//! - never force-delete a pod while its image has a watcher from a live (Ready) node, and only a pod
//!   that is already Terminating or whose node is not Ready (a pod on a lost node stays Running in
//!   the API forever);
//! - delete a VolumeAttachment only when its node is not Ready and the image has no watcher;
//! - release a VolumeAttachment's finalizer only while it is being deleted and the image has no watcher;
//! - `rbd lock rm` carries a warning: it blocklists the old locker for an hour;
//! - guarded unfence: removing an out-of-service taint or a blocklist entry of a node needs proof
//!   that the node went through a reboot since it was fenced (its `status.nodeInfo.bootID` differs
//!   from the one journaled with the fence), or the node's name typed as an override: a fenced
//!   node that never rebooted may still run the clients the fence cut off;
//! - never act on a node a Medik8s remediator acts on without its name typed
//!   ([`crate::remedy::action::remediating`]).
//! - csi-addons ([`crate::model::fence`]): a NetworkFence is created only with addresses proven to
//!   be the fenced node's (no override), lifted only through the fence (`Unfenced`, with the
//!   reboot guard), and a blocklist entry a `Fenced` fence owns is never removed by hand.

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::attribution::{AddressBook, Attribution, Proof, ips_of};
use crate::model::ceph::EntityAddr;
use crate::remedy::action::precheck::{LiveState, NodeFact, PodFact};
pub use crate::remedy::action::safety_error::SafetyError;
use crate::remedy::action::{WriteAction, remediating};
use crate::remedy::playbook::version::{OUT_OF_SERVICE_GATE, OutOfService, ServerVersion};

/// Overrides typed by the operator. Each must equal the object's name exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// The Ready node's name, to fence it anyway.
    pub fence_ready_node: Option<String>,
    /// The exact blocklist entry (`IP:0/0`), to blocklist a whole host anyway.
    pub wide_blocklist: Option<String>,
    /// The node's name, to unfence it without proof that it rebooted since the fence.
    pub unfence_not_rebooted: Option<String>,
    /// Not typed: node → `bootID` journaled when it was fenced (the runner fills it from the
    /// journals before an unfence). Empty when no fence of the node was journaled.
    pub fenced_boot_ids: BTreeMap<String, String>,
    /// [`OUT_OF_SERVICE_GATE`], typed to say kube-controller-manager runs with that feature gate
    /// on (an out-of-service taint on 1.24–1.25).
    pub feature_gate: Option<String>,
    /// Not typed: the API server's version, read live by the runner before an out-of-service
    /// taint; `None` when not read (no gate is checked then).
    pub server_version: Option<ServerVersion>,
    /// The exact address (`IP:port/nonce`, or the whole-host entry), typed to fence a client
    /// that no proof ties to a node ([`crate::attribution`]).
    pub unattributed: Option<String>,
    /// The node's name, typed to act on a node a Medik8s remediator acts on
    /// ([`crate::remedy::action::remediating`]).
    pub remediating: Option<String>,
    /// Not typed: the console's proofs beyond the live nodes' own addresses (image metadata,
    /// client pods, probe, rules, annotation), built from its snapshot by whoever opens the
    /// playbook; empty = only the nodes' addresses tie.
    pub address_book: std::sync::Arc<AddressBook>,
}

/// An action that passed the safety rules on a given live state. Only [`approve`] makes one.
#[derive(Debug, Clone)]
pub struct Approved {
    action: WriteAction,
    warnings: Vec<String>,
    boot_ids: BTreeMap<String, String>,
}

impl Approved {
    /// The action.
    pub fn action(&self) -> &WriteAction {
        &self.action
    }

    /// Warnings to show in the confirm popup (lock rm blocklists the locker, overrides used, ...).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// For a fence (blocklist add, out-of-service taint): node → live `bootID` of the nodes it
    /// fences, to journal with the intent (what a later unfence compares with). Else empty.
    pub fn boot_ids(&self) -> &BTreeMap<String, String> {
        &self.boot_ids
    }
}

/// Who a client IP belongs to on the live state: the live nodes that have it among their
/// `status.addresses` (all of them when several do), else the node `book` ties it to (with the
/// proof), else the [`Attribution::Unattributed`] with its candidates.
pub fn owners<'a>(
    ip: IpAddr,
    live: &'a LiveState,
    book: &AddressBook,
) -> Result<Vec<(&'a NodeFact, Option<Proof>)>, Attribution> {
    let at = live.nodes_at(ip);
    if !at.is_empty() {
        return Ok(at.into_iter().map(|n| (n, None)).collect());
    }
    match book.attribute_ip(ip, &[]) {
        Attribution::Tied(t) => Ok(live.node(&t.node).into_iter().map(|n| (n, Some(t.proof.clone()))).collect()),
        other => Err(other),
    }
}

/// The watcher rule of a VolumeAttachment's finalizer release or delete for `node`: releasing it
/// tells the attach-detach controller the volume left `node`, so every watcher of the image must be
/// proven to belong to another node ([`owners`]: an InternalIP, or the address book). A watcher of
/// `node` itself, one whose address no node owns, or one shared by `node` and another refuses with
/// [`SafetyError::HasWatchers`] (all such addresses, comma-separated); unknown watchers with
/// [`SafetyError::WatchersUnknown`]; a bad address with [`SafetyError::BadAddress`]. A watcher proven
/// another node's (the replacement that already attached, as 1.37's controllers do) is a warning.
fn watchers_clear_of(
    node: &str,
    live: &LiveState,
    book: &AddressBook,
    warnings: &mut Vec<String>,
) -> Result<(), SafetyError> {
    let watchers = live.watchers.as_ref().ok_or(SafetyError::WatchersUnknown)?;
    let mut blocking = Vec::new();
    for w in watchers {
        let a = EntityAddr::parse(&w.address).ok_or_else(|| SafetyError::BadAddress { addr: w.address.clone() })?;
        let others: Vec<&str> = match owners(a.ip, live, book) {
            Ok(nodes) if !nodes.is_empty() && nodes.iter().all(|(n, _)| n.name != node) => {
                nodes.iter().map(|(n, _)| n.name.as_str()).collect()
            }
            _ => {
                blocking.push(w.address.as_str());
                continue;
            }
        };
        warnings.push(format!(
            "watcher {} is node {}'s, not {node}'s: releasing {node}'s attachment leaves it open there",
            w.address,
            others.join(",")
        ));
    }
    if blocking.is_empty() { Ok(()) } else { Err(SafetyError::HasWatchers(blocking.join(", "))) }
}

/// The nodes a fence or unfence concerns: the node of a taint or of a NetworkFence created; for
/// a blocklist entry, the nodes its address belongs to ([`owners`]; a range: every node with an
/// address inside it); for a NetworkFence's state, every node with an address in its CIDRs.
pub fn fenced_nodes<'a>(action: &WriteAction, live: &'a LiveState, book: &AddressBook) -> Vec<&'a NodeFact> {
    match action {
        WriteAction::TaintOutOfService { node }
        | WriteAction::UntaintOutOfService { node }
        | WriteAction::NetworkFenceCreate { node, .. } => live.node(node).into_iter().collect(),
        WriteAction::NetworkFenceState { name, .. } => crate::remedy::action::fence_rules::nodes_of_fence(name, live),
        WriteAction::BlocklistAdd { addr } | WriteAction::BlocklistRm { addr } => {
            let ip = ips_of(addr).first().copied();
            let owned = ip.and_then(|ip| owners(ip, live, book).ok()).unwrap_or_default();
            owned.into_iter().map(|(n, _)| n).collect()
        }
        WriteAction::BlocklistRangeRm { range } => match crate::model::ceph::parse_range(range) {
            Some(net) => {
                live.nodes.iter().filter(|n| n.ips.iter().any(|ip| net.contains(&ip.to_canonical()))).collect()
            }
            None => vec![],
        },
        _ => vec![],
    }
}

/// The nodes `action` touches: a fence's or unfence's nodes ([`fenced_nodes`]), a pod's node, a
/// VolumeAttachment's node, the node whose `volumesInUse` is released; each once.
pub fn touched_nodes(action: &WriteAction, live: &LiveState, book: &AddressBook) -> Vec<String> {
    let mut out: Vec<String> = match action {
        WriteAction::DeletePod { namespace, name, .. } | WriteAction::ForceDeletePod { namespace, name, .. } => live
            .pods
            .iter()
            .filter(|p| &p.namespace == namespace && &p.name == name)
            .filter_map(|p| p.node.clone())
            .collect(),
        WriteAction::DeleteVolumeAttachment { node, .. } | WriteAction::ReleaseVolumeInUse { node, .. } => {
            vec![node.clone()]
        }
        WriteAction::RemoveVaFinalizer { name, .. } => {
            live.volume_attachments.iter().filter(|v| &v.name == name).map(|v| v.node.clone()).collect()
        }
        _ => fenced_nodes(action, live, book).into_iter().map(|n| n.name.clone()).collect(),
    };
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| seen.insert(n.clone()));
    out
}

/// Guarded unfence: every node the unfence concerns rebooted since its journaled fence, or the
/// operator typed its name. The nodes it concerns: those its address belongs to now
/// ([`fenced_nodes`]), and every live node its journaled fence named (`fenced_boot_ids`), so a
/// fence tied by a proof the caller cannot see (an `unstick undo` without the console's address
/// book: a storage address, a holder pod's IP) is still guarded.
fn unfence(
    action: &WriteAction,
    live: &LiveState,
    ov: &Overrides,
    warnings: &mut Vec<String>,
) -> Result<(), SafetyError> {
    let mut nodes = fenced_nodes(action, live, &ov.address_book);
    for name in ov.fenced_boot_ids.keys() {
        if let Some(n) = live.node(name).filter(|n| !nodes.iter().any(|m| m.name == n.name)) {
            nodes.push(n);
        }
    }
    for n in nodes {
        let why = match (ov.fenced_boot_ids.get(&n.name), &n.boot_id) {
            (Some(then), Some(now)) if then != now => {
                warnings.push(format!("node {} rebooted since it was fenced (bootID {then} → {now})", n.name));
                continue;
            }
            (Some(then), _) => format!("has not rebooted since it was fenced (bootID {then} unchanged)"),
            (None, _) => "has no journaled fence to compare its bootID with".to_string(),
        };
        if ov.unfence_not_rebooted.as_deref() != Some(n.name.as_str()) {
            return Err(SafetyError::NotRebooted { node: n.name.clone(), why });
        }
        warnings.push(format!("OVERRIDE: node {} {why}, unfenced anyway", n.name));
    }
    Ok(())
}

/// The out-of-service taint on the server's version: on by default from 1.26; on 1.24–1.25 only
/// with the typed feature gate; before 1.24 allowed with a warning that nothing detaches (the
/// playbook never proposes it there; its NoExecute effect still evicts the node's pods).
fn taint_gate(ov: &Overrides, warnings: &mut Vec<String>) -> Result<(), SafetyError> {
    let Some(v) = ov.server_version else { return Ok(()) };
    match v.out_of_service() {
        OutOfService::OnByDefault => Ok(()),
        OutOfService::Absent => {
            warnings.push(format!(
                "API server {v}: before 1.24 no controller detaches volumes for the out-of-service taint; only its NoExecute effect (evicting the node's pods) applies"
            ));
            Ok(())
        }
        OutOfService::BehindGate if ov.feature_gate.as_deref() == Some(OUT_OF_SERVICE_GATE) => {
            warnings.push(format!("OVERRIDE: API server {v}: {OUT_OF_SERVICE_GATE} typed as on"));
            Ok(())
        }
        OutOfService::BehindGate => Err(SafetyError::FeatureGate { version: v.to_string() }),
    }
}

/// The live pod `namespace/name`, if it still has the UID the action was prepared for.
/// Errors: [`SafetyError::Missing`] when it is gone (or has no UID), [`SafetyError::Stale`] when a
/// pod of that name has another UID (it was replaced).
fn pod_with_uid<'a>(live: &'a LiveState, namespace: &str, name: &str, uid: &str) -> Result<&'a PodFact, SafetyError> {
    let key = format!("{namespace}/{name}");
    let p = live.pod(namespace, name).filter(|p| p.uid.is_some());
    let p = p.ok_or_else(|| SafetyError::Missing(format!("pod {key}")))?;
    if p.uid.as_deref() != Some(uid) {
        return Err(SafetyError::Stale {
            what: format!("pod {key} uid"),
            expected: uid.to_string(),
            found: p.uid.clone().unwrap_or_default(),
        });
    }
    Ok(p)
}

fn fence_node(node: &str, live: &LiveState, ov: &Overrides, warnings: &mut Vec<String>) -> Result<(), SafetyError> {
    let Some(n) = live.node(node) else { return Ok(()) };
    if n.ready.is_ready() {
        if ov.fence_ready_node.as_deref() != Some(node) {
            return Err(SafetyError::ReadyNode { node: node.into() });
        }
        warnings.push(format!("OVERRIDE: node {node} is Ready and is fenced anyway"));
    }
    Ok(())
}

/// Checks `action` against `live`. Returns the approved action with its warnings, or why not.
pub fn approve(action: &WriteAction, live: &LiveState, ov: &Overrides) -> Result<Approved, SafetyError> {
    let mut warnings: Vec<String> = action.warning().into_iter().collect();
    match action {
        WriteAction::BlocklistAdd { addr } => {
            // A bare IP is what `ceph osd blocklist add IP` stores as `IP:0/0`: the whole host.
            let bare = addr.trim().parse().ok().map(|ip| EntityAddr { ip, port: 0, nonce: 0 });
            let a = bare
                .or_else(|| EntityAddr::parse(addr))
                .ok_or_else(|| SafetyError::BadAddress { addr: addr.clone() })?;
            if a.nonce == 0 {
                if a.ip.is_loopback() {
                    return Err(SafetyError::OwnHost { addr: addr.clone() });
                }
                if ov.wide_blocklist.as_deref() != Some(addr.as_str()) {
                    return Err(SafetyError::WideBlocklist { addr: addr.clone(), ip: a.ip.to_string() });
                }
                warnings.push(format!("OVERRIDE: {addr} blocks every client on {}", a.ip));
            }
            match owners(a.ip, live, &ov.address_book) {
                Ok(nodes) => {
                    for (n, proof) in nodes {
                        if let Some(p) = proof {
                            warnings.push(format!("{} is node {}'s by {p}", a.ip, n.name));
                        }
                        fence_node(&n.name, live, ov, &mut warnings)?;
                    }
                }
                Err(attr) if ov.unattributed.as_deref() == Some(addr.as_str()) => {
                    warnings.push(format!("OVERRIDE: no proof ties {addr} to a node ({}), fenced anyway", attr.text()));
                }
                Err(attr) => return Err(SafetyError::Unattributed { addr: addr.clone(), attribution: attr.text() }),
            }
        }
        WriteAction::TaintOutOfService { node } => {
            if live.node(node).is_none() {
                return Err(SafetyError::Missing(format!("node {node}")));
            }
            fence_node(node, live, ov, &mut warnings)?;
            taint_gate(ov, &mut warnings)?;
        }
        WriteAction::ForceDeletePod { namespace, name, uid } => {
            let key = format!("{namespace}/{name}");
            let p = pod_with_uid(live, namespace, name, uid)?;
            let node_ready = p.node.as_deref().is_none_or(|n| live.node(n).is_some_and(|f| f.ready.is_ready()));
            if !p.terminating && node_ready {
                return Err(SafetyError::NotTerminating {
                    pod: key,
                    node: p.node.clone().unwrap_or_else(|| "-".into()),
                });
            }
            if !p.finalizers.is_empty() {
                warnings.push(format!(
                    "pod {key} has finalizers {}: like kubectl, force-delete leaves them; the pod stays until they are removed",
                    p.finalizers.join(",")
                ));
            }
            let watchers = live.watchers.as_ref().ok_or(SafetyError::WatchersUnknown)?;
            for w in watchers {
                let Some(a) = EntityAddr::parse(&w.address) else {
                    return Err(SafetyError::BadAddress { addr: w.address.clone() });
                };
                match owners(a.ip, live, &ov.address_book) {
                    Ok(nodes) => {
                        if let Some((n, _)) = nodes.iter().find(|(n, _)| n.ready.is_ready()) {
                            return Err(SafetyError::LiveWatcher { addr: w.address.clone(), node: n.name.clone() });
                        }
                    }
                    Err(attr) => warnings.push(format!("watcher {}: {}", w.address, attr.text())),
                }
            }
        }
        WriteAction::DeletePod { namespace, name, uid } => {
            pod_with_uid(live, namespace, name, uid)?;
        }
        WriteAction::RemoveVaFinalizer { name, finalizer } => {
            let v = live
                .va(name)
                .filter(|v| v.present)
                .ok_or_else(|| SafetyError::Missing(format!("volumeattachment {name}")))?;
            if !v.deleting {
                return Err(SafetyError::NotDeleting { name: name.clone() });
            }
            if !v.finalizers.contains(finalizer) {
                return Err(SafetyError::Stale {
                    what: format!("finalizers of volumeattachment {name}"),
                    expected: finalizer.clone(),
                    found: v.finalizers.join(","),
                });
            }
            let node = v.node.clone();
            watchers_clear_of(&node, live, &ov.address_book, &mut warnings)?;
        }
        WriteAction::ReleaseVolumeInUse { node, .. } => {
            let n = live.node(node).ok_or_else(|| SafetyError::Missing(format!("node {node}")))?;
            if n.ready.is_ready() {
                return Err(SafetyError::ReadyNode { node: node.clone() });
            }
            if let Some(p) = live.pods.iter().find(|p| p.uid.is_some() && p.node.as_deref() == Some(node.as_str())) {
                return Err(SafetyError::PodStillOnNode {
                    pod: format!("{}/{}", p.namespace, p.name),
                    node: node.clone(),
                });
            }
            let watchers = live.watchers.as_ref().ok_or(SafetyError::WatchersUnknown)?;
            for w in watchers {
                let a =
                    EntityAddr::parse(&w.address).ok_or_else(|| SafetyError::BadAddress { addr: w.address.clone() })?;
                let owned = owners(a.ip, live, &ov.address_book).unwrap_or_default();
                if owned.iter().any(|(o, _)| o.name == n.name) {
                    return Err(SafetyError::HasWatchers(w.address.clone()));
                }
            }
        }
        WriteAction::DeleteVolumeAttachment { name, node } => {
            let v = live
                .va(name)
                .filter(|v| v.present)
                .ok_or_else(|| SafetyError::Missing(format!("volumeattachment {name}")))?;
            if v.node != *node {
                return Err(SafetyError::Stale {
                    what: format!("node of volumeattachment {name}"),
                    expected: node.clone(),
                    found: v.node.clone(),
                });
            }
            if live.node(node).is_some_and(|n| n.ready.is_ready()) {
                return Err(SafetyError::AttachedToReadyNode { name: name.clone(), node: node.clone() });
            }
            watchers_clear_of(node, live, &ov.address_book, &mut warnings)?;
        }
        WriteAction::SetMountPropagation { namespace, daemonset, container, mount_path, from, .. } => {
            let m = live
                .mounts
                .iter()
                .find(|m| {
                    m.mount.namespace == *namespace
                        && m.mount.daemonset == *daemonset
                        && m.mount.container == *container
                        && m.mount.mount_path == *mount_path
                })
                .filter(|m| m.present)
                .ok_or_else(|| SafetyError::Missing(format!("daemonset {namespace}/{daemonset} mount {mount_path}")))?;
            if m.propagation != *from {
                return Err(SafetyError::Stale {
                    what: format!("mountPropagation of {namespace}/{daemonset} {mount_path}"),
                    expected: from.clone().unwrap_or_else(|| "(unset)".into()),
                    found: m.propagation.clone().unwrap_or_else(|| "(unset)".into()),
                });
            }
        }
        WriteAction::RbdLockRm { lock_id, locker, .. } => {
            if let Some(locks) = &live.locks
                && !locks.iter().any(|l| l.id == *lock_id && l.locker == *locker)
            {
                return Err(SafetyError::Stale {
                    what: "locks of the image".into(),
                    expected: format!("{lock_id} by {locker}"),
                    found: locks.iter().map(|l| format!("{} by {}", l.id, l.locker)).collect::<Vec<_>>().join(", "),
                });
            }
        }
        WriteAction::BlocklistRm { .. } | WriteAction::BlocklistRangeRm { .. } => {
            crate::remedy::action::fence_rules::not_fence_owned(action, live)?;
            unfence(action, live, ov, &mut warnings)?
        }
        WriteAction::UntaintOutOfService { .. } => unfence(action, live, ov, &mut warnings)?,
        WriteAction::NetworkFenceCreate { node, cidrs, .. } => {
            live.fences.as_ref().ok_or(SafetyError::NoCsiAddons)?;
            let tie = |ip| owners(ip, live, &ov.address_book);
            crate::remedy::action::fence_rules::proven_cidrs(node, cidrs, tie, &mut warnings)?;
            fence_node(node, live, ov, &mut warnings)?;
        }
        WriteAction::NetworkFenceState { to, .. } if to == crate::model::fence::UNFENCED => {
            unfence(action, live, ov, &mut warnings)?
        }
        WriteAction::NetworkFenceState { .. } => {
            for n in fenced_nodes(action, live, &ov.address_book) {
                fence_node(&n.name, live, ov, &mut warnings)?;
            }
        }
        WriteAction::SnapCreate { .. } => {}
    }
    let touched = touched_nodes(action, live, &ov.address_book);
    remediating::gate(&touched, &live.remediation, ov.remediating.as_deref(), &mut warnings)
        .map_err(|r| SafetyError::Remediating { node: r.node, by: r.by })?;
    let boot_ids = match action {
        WriteAction::BlocklistAdd { .. }
        | WriteAction::TaintOutOfService { .. }
        | WriteAction::NetworkFenceCreate { .. } => fenced_nodes(action, live, &ov.address_book)
            .into_iter()
            .filter_map(|n| Some((n.name.clone(), n.boot_id.clone()?)))
            .collect(),
        _ => BTreeMap::new(),
    };
    Ok(Approved { action: action.clone(), warnings, boot_ids })
}

#[cfg(test)]
#[path = "safety_tests.rs"]
mod tests;
