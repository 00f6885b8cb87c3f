//! `unexplained`: a pod stuck on a Ceph volume ([`super::stuck`]) whose cause no rule
//! recognised. The finding says so, and gives what there is: the pod, its volume's lineage, the
//! latest failure events verbatim (decoded), what was checked and found (VolumeAttachments, the
//! node's Ready condition, the image's watchers and locks, the blocklist for the node's
//! addresses, each with "not read" when it was not), and the next reads that would tell more.
//! Severity critical: a pod is blocked; `diagnose` exits 1.

use super::causes::is_busy_driver;
use super::ctx::Ctx;
use super::events::EventView;
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::stuck_parts::{How, lineage_evidence, state_words, volume_objects};
use crate::lineage::{VolumeLineage, is_cephfs_driver};
use crate::model::kube::internal_ips;
use crate::model::objects::Pod;

/// How many failure events the finding quotes (newest first).
const EVENTS_QUOTED: usize = 5;

/// The node plugin's log for `driver` on `node`, as a command a person runs (not run here).
pub(crate) fn plugin_logs(driver: &str, node: &str) -> String {
    let (app, container) = if driver.contains("cephfs") {
        ("csi-cephfsplugin", "csi-cephfsplugin")
    } else if driver.ends_with("csi.ceph.com") {
        ("csi-rbdplugin", "csi-rbdplugin")
    } else {
        return format!("on node {node}: `journalctl -u kubelet | grep -i rbd` and `dmesg | grep -i 'rbd\\|libceph'`");
    };
    let ns = driver.split_once(".rbd.csi").or_else(|| driver.split_once(".cephfs.csi")).map(|(ns, _)| ns);
    let get = match ns {
        // Rook names the driver after its operator namespace and labels the pods app=<plugin>
        Some(ns) => format!("kubectl -n {ns} get pods -l app={app} --field-selector spec.nodeName={node} -o name"),
        // ceph-csi's manifests label app=<plugin>; its Helm charts app=ceph-csi-rbd/cephfs,component=nodeplugin
        None => format!("kubectl get pods -A -l app={app} --field-selector spec.nodeName={node}"),
    };
    let ns_flag = ns.map(|n| format!("-n {n} ")).unwrap_or_else(|| "-n <namespace> ".into());
    format!("`{get}`, then `kubectl {ns_flag}logs <that pod> -c {container}`")
}

/// What was checked about `vol` and `node`, one evidence line each.
fn checked(ctx: &Ctx<'_>, vol: &VolumeLineage, node: &str) -> Vec<Evidence> {
    let mut out = vec![ctx.node_evidence(node)];
    let on = |t: String| Evidence::new(EvidenceSource::VolumeAttachment, t, ctx.seen);
    if vol.attachments.is_empty() {
        out.push(on(format!("no VolumeAttachment names {}", vol.pv)));
    }
    for a in &vol.attachments {
        let del = if a.deleting { ", being deleted" } else { "" };
        out.push(on(format!("VolumeAttachment {} -> node {}: attached={}{del}", a.name, a.node, a.attached)));
    }
    if let Some(img) = &vol.image {
        let spec = img.spec();
        match ctx.snap.ceph.images.get(img) {
            Some(f) => {
                let w = match &f.watchers.value {
                    Ok(ws) if ws.is_empty() => format!("rbd status {spec}: no watchers"),
                    Ok(ws) => {
                        let list: Vec<String> = ws
                            .iter()
                            .map(|w| match ctx.node_of_addr(&w.address) {
                                Some(t) => format!("{} ({t})", w.address),
                                None => match ctx.attr.attribute(&w.address, &crate::attribution::volume_nodes(vol)) {
                                    Some(a) => format!("{} ({})", w.address, a.text()),
                                    None => w.address.clone(),
                                },
                            })
                            .collect();
                        format!("rbd status {spec}: watchers {}", list.join(", "))
                    }
                    Err(e) => format!("rbd status {spec}: not read ({e})"),
                };
                out.push(Evidence::new(EvidenceSource::RbdStatus, w, f.watchers.at));
                let l = match &f.locks.value {
                    Ok(ls) if ls.is_empty() => format!("rbd lock ls {spec}: no locks"),
                    Ok(ls) => {
                        let list: Vec<String> =
                            ls.iter().map(|l| format!("{} by {} at {}", l.id, l.locker, l.address)).collect();
                        format!("rbd lock ls {spec}: {}", list.join(", "))
                    }
                    Err(e) => format!("rbd lock ls {spec}: not read ({e})"),
                };
                out.push(Evidence::new(EvidenceSource::RbdLockLs, l, f.locks.at));
            }
            None => {
                out.push(Evidence::new(EvidenceSource::RbdStatus, format!("rbd status {spec}: not read"), ctx.seen))
            }
        }
    }
    let ips: Vec<String> =
        ctx.idx.node(node).map(|(n, _)| internal_ips(n)).unwrap_or_default().iter().map(|ip| ip.to_string()).collect();
    let text = match ctx.snap.ceph.blocklist.as_ref() {
        Some(b) => match &b.value {
            Ok(_) if ips.is_empty() => format!("ceph osd blocklist ls: node {node} has no InternalIP to look up"),
            Ok(_) => {
                let fenced: Vec<&String> = ips
                    .iter()
                    .filter(|ip| {
                        let addr = if ip.contains(':') { format!("[{ip}]:0/0") } else { format!("{ip}:0/0") };
                        ctx.blocklisted(&addr)
                    })
                    .collect();
                if fenced.is_empty() {
                    format!(
                        "ceph osd blocklist ls: no whole-host or range entry covers node {node} ({})",
                        ips.join(", ")
                    )
                } else {
                    format!(
                        "ceph osd blocklist ls: an entry covers node {node} at {}",
                        ips.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
                    )
                }
            }
            Err(e) => format!("ceph osd blocklist ls: not read ({e})"),
        },
        None => "ceph osd blocklist ls: not read".to_string(),
    };
    let at = ctx.snap.ceph.blocklist.as_ref().map(|b| b.at).unwrap_or(ctx.seen);
    out.push(Evidence::new(EvidenceSource::Blocklist, text, at));
    out
}

/// The `unexplained` finding about pod `key` of `vol` on `node`; `events` are its recent failure
/// events (and its claim's), newest first.
pub(crate) fn finding(
    ctx: &Ctx<'_>,
    vol: &VolumeLineage,
    key: &str,
    pod: &Pod,
    node: &str,
    how: &How,
    events: &[&EventView],
) -> Finding {
    let busy = events.iter().any(|e| is_busy_driver(e));
    let cephfs = is_cephfs_driver(&vol.driver);
    let hint = if busy && cephfs {
        "; the driver says an earlier operation on the volume is still running (a hypothesis to \
check: a CephFS mount or unmount hanging on unreachable monitors or MDS)"
    } else if busy {
        "; the driver says an earlier operation on the volume is still running (a hypothesis to \
check: a `rbd map` or unmount hanging on unreachable monitors or OSDs)"
    } else if events.is_empty() {
        "; no failure event about it was recorded"
    } else {
        ""
    };
    let summary = format!(
        "{key} on node {node} is {}, volume {}: no known cause matched the evidence{hint}",
        state_words(ctx, how),
        vol.pv
    );
    let mut b = Builder::new(PatternId::Unexplained, Severity::Critical, &format!("{key}#{}", vol.pv), summary)
        .since(Some(how.since()))
        .volume(Some(&vol.pv))
        .node(Some(node))
        .object(ObjectRef::pod(key))
        .evidence(ctx.pod_evidence(key, pod))
        .evidence(lineage_evidence(ctx, vol));
    for e in events.iter().take(EVENTS_QUOTED) {
        b = b.evidence(ctx.event_evidence(e));
    }
    b = b.evidences(checked(ctx, vol, node));
    let (status, probe, dmesg) = match (&vol.image, &vol.subvolume) {
        (Some(i), _) => (
            format!("`rbd status {}`, `rbd info {}`; ", i.spec(), i.spec()),
            "mounts and holders of the device",
            "rbd\\|libceph",
        ),
        (None, Some(s)) => (
            format!(
                "`{}`, `ceph tell mds.{}:0 client ls` (is the node's client there?); ",
                s.info_command(),
                s.fs.as_deref().unwrap_or("<fs>")
            ),
            "the CephFS mounts on the node",
            "ceph\\|libceph",
        ),
        (None, None) if cephfs => (String::new(), "the CephFS mounts on the node", "ceph\\|libceph"),
        (None, None) => (String::new(), "mounts and holders of the device", "rbd\\|libceph"),
    };
    let explanation = format!(
        "unstick recognised none of its causes in this evidence. What it knows: the pod's state, the \
volume's lineage, the events quoted verbatim and the checks listed (each says what it found, or that \
it was not read). What it does not know: the node's kernel log, the node plugin's log, the mounts on \
the node. Next reads: {status}`unstick probe` on node {node} ({probe}); the node plugin's log: {}; on \
the node `dmesg | grep -i '{dmesg}'`. If the events say an operation \"already exists\", the driver is \
still busy with an earlier call: its log shows which one and where it hangs.",
        plugin_logs(&vol.driver, node)
    );
    b = volume_objects(b.explanation(explanation), vol, node);
    b.build()
}
