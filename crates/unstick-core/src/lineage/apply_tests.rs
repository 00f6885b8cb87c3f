//! After any sequence of batches of changes applied as the console applies them (PVs, then
//! VolumeAttachments, then nodes, then pods; the rest skipped after a rebuild), the lineage
//! equals a build on the new snapshot, indexes included.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::fixtures;
use crate::model::Snapshot;
use crate::model::meta::SlimObject;
use k8s_openapi::api::core::v1::{AttachedVolume, NodeAddress};

/// Everything a lineage holds, in a comparable form (`shared_ips` left out: a flag the
/// incremental path may keep after the shared address is gone).
fn dump(l: &Lineage) -> String {
    let sorted = |m: &HashMap<String, usize>| m.iter().map(|(k, v)| (k.clone(), *v)).collect::<BTreeMap<_, _>>();
    let images: BTreeMap<String, usize> = l.by_image.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let unique: BTreeMap<String, Option<usize>> =
        l.volumes.iter().filter_map(|v| v.unique_name.clone()).map(|u| (u.clone(), l.by_unique(&u))).collect();
    let pods: BTreeMap<&String, &Vec<usize>> = l.pod_volumes.iter().collect();
    let ips: BTreeMap<&std::net::IpAddr, &String> = l.node_by_ip.iter().collect();
    let attached: BTreeMap<&String, Vec<usize>> = l
        .attached_to
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| {
            let mut v = v.clone();
            v.sort_unstable();
            (k, v)
        })
        .collect();
    format!(
        "{:#?}\n{:?}\n{:?}\n{images:?}\n{unique:?}\n{pods:?}\n{ips:?}\n{attached:?}",
        l.volumes,
        sorted(&l.by_pv),
        sorted(&l.by_pvc)
    )
}

fn ptrs<T>(v: &[Arc<T>]) -> HashSet<usize> {
    v.iter().map(|p| Arc::as_ptr(p) as usize).collect()
}

/// `old`'s objects not in `new`, and `new`'s not in `old`, by `Arc`.
fn changed<T>(old: &[Arc<T>], new: &[Arc<T>]) -> (Vec<Arc<T>>, Vec<Arc<T>>) {
    let (was, is) = (ptrs(old), ptrs(new));
    let gone = old.iter().filter(|p| !is.contains(&(Arc::as_ptr(p) as usize))).cloned().collect();
    let came = new.iter().filter(|p| !was.contains(&(Arc::as_ptr(p) as usize))).cloned().collect();
    (gone, came)
}

/// What the console does with a batch from `old` to `new`; returns the volumes said changed.
fn apply(l: &mut Lineage, old: &Snapshot, new: &Snapshot) -> Applied {
    let mut all = BTreeSet::new();
    let (g, c) = changed(&old.pvs, &new.pvs);
    if !g.is_empty() || !c.is_empty() {
        match l.apply_pvs(&g, &c, new) {
            Applied::Rebuilt => return Applied::Rebuilt,
            Applied::Volumes(v) => all.extend(v),
        }
    }
    let (g, c) = changed(&old.volume_attachments, &new.volume_attachments);
    if let Applied::Volumes(v) = l.apply_vas(&g, &c) {
        all.extend(v);
    }
    let (g, c) = changed(&old.nodes, &new.nodes);
    match l.apply_nodes(&g, &c, new) {
        Applied::Rebuilt => return Applied::Rebuilt,
        Applied::Volumes(v) => all.extend(v),
    }
    let (g, c) = changed(&old.pods, &new.pods);
    l.apply_pods(&g, &c, &new.pods);
    Applied::Volumes(all)
}

fn sort_by_name<K: SlimObject>(v: &mut [Arc<K>]) {
    v.sort_by(|a, b| {
        (a.meta().namespace.as_deref(), a.meta().name.as_deref())
            .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
    });
}

/// Replaces `v[at % len]` by a changed copy.
fn change<K: Clone>(v: &mut [Arc<K>], at: usize, f: impl FnOnce(&mut K)) {
    if v.is_empty() {
        return;
    }
    let i = at % v.len();
    let mut o = (*v[i]).clone();
    f(&mut o);
    v[i] = Arc::new(o);
}

/// Toggles `u` in `list`.
fn toggle(list: &mut Vec<String>, u: &str) {
    match list.iter().position(|x| x == u) {
        Some(k) => {
            list.remove(k);
        }
        None => list.push(u.to_string()),
    }
}

/// One change of `s`: `kind` picks the object kind and what changes, `at` which object and
/// which value.
fn step(s: &mut Snapshot, pool: &mut Snapshot, uniques: &[String], kind: u8, at: usize) {
    let u = uniques[at % uniques.len()].clone();
    match kind {
        // a node's volumesInUse / volumesAttached gain or lose a volume
        0 => change(&mut s.nodes, at, |n| {
            let st = n.status.get_or_insert_with(Default::default);
            toggle(st.volumes_in_use.get_or_insert_with(Vec::new), &u);
        }),
        1 => change(&mut s.nodes, at, |n| {
            let st = n.status.get_or_insert_with(Default::default);
            let list = st.volumes_attached.get_or_insert_with(Vec::new);
            match list.iter().position(|a| a.name == u) {
                Some(k) => {
                    list.remove(k);
                }
                None => list.push(AttachedVolume { name: u.clone(), device_path: String::new() }),
            }
        }),
        // a node's InternalIP moves (sometimes onto another node's)
        2 => change(&mut s.nodes, at, |n| {
            let st = n.status.get_or_insert_with(Default::default);
            let ip = ["10.47.136.60", "127.0.0.1", "10.10.11.22", "10.20.0.14"][at % 4].to_string();
            st.addresses = Some(vec![NodeAddress { type_: "InternalIP".into(), address: ip }]);
        }),
        // a node goes or comes back
        3 => {
            if at.is_multiple_of(2) && !s.nodes.is_empty() {
                pool.nodes.push(s.nodes.remove(at % s.nodes.len()));
            } else if !pool.nodes.is_empty() {
                s.nodes.push(pool.nodes.remove(at % pool.nodes.len()));
                sort_by_name(&mut s.nodes);
            }
        }
        // a VolumeAttachment changes: attached, deleting, its node, its PV
        4 => change(&mut s.volume_attachments, at, |v| match at % 4 {
            0 => v.status.get_or_insert_with(Default::default).attached ^= true,
            1 => {
                let t = &mut v.metadata.deletion_timestamp;
                *t = if t.is_some() {
                    None
                } else {
                    Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(fixtures::now()))
                };
            }
            2 => v.spec.node_name = format!("k8s-node-{}", ["a", "b", "lost", "x"][at / 4 % 4]),
            _ => {
                v.spec.source.persistent_volume_name =
                    s.pvs.get(at / 4 % s.pvs.len().max(1)).and_then(|p| p.metadata.name.clone())
            }
        }),
        5 => {
            if at.is_multiple_of(2) && !s.volume_attachments.is_empty() {
                pool.volume_attachments.push(s.volume_attachments.remove(at % s.volume_attachments.len()));
            } else if !pool.volume_attachments.is_empty() {
                let mut v = (*pool.volume_attachments.remove(at % pool.volume_attachments.len())).clone();
                v.metadata.name = Some(format!("va-{at}"));
                s.volume_attachments.push(Arc::new(v));
                sort_by_name(&mut s.volume_attachments);
            }
        }
        // a PV's access modes change in place (the incremental path), or its claim goes (a
        // rebuild)
        6 => change(&mut s.pvs, at, |p| {
            let sp = p.spec.get_or_insert_with(Default::default);
            if at.is_multiple_of(5) {
                sp.claim_ref = None;
            } else {
                let m = if at.is_multiple_of(2) { "ReadWriteMany" } else { "ReadWriteOnce" };
                sp.access_modes = Some(vec![m.into()]);
            }
        }),
        // a pod changes (not joined: its claim moves)
        _ => change(&mut s.pods, at, |p| {
            let first = p.spec.as_mut().and_then(|s| s.volumes.as_mut()).and_then(|v| v.first_mut());
            if let Some(c) = first.and_then(|v| v.persistent_volume_claim.as_mut()) {
                c.claim_name = if c.claim_name == "pvc1" { "gone".into() } else { "pvc1".into() };
            }
        }),
    }
}

/// The incident fixture in the stores' order (every list by namespace/name).
fn sorted_incidents() -> Snapshot {
    let mut s = fixtures::incidents();
    sort_by_name(&mut s.nodes);
    sort_by_name(&mut s.pods);
    sort_by_name(&mut s.pvs);
    sort_by_name(&mut s.volume_attachments);
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(64)))]
    /// Batches of one to three changes; the lineage equals a build after each batch, and every
    /// volume whose lineage differs from before the batch is among those said changed.
    #[test]
    fn applied_batches_equal_a_build(
        batches in proptest::collection::vec(proptest::collection::vec((0u8..8, 0usize..64), 1..4), 1..12),
    ) {
        let mut snap = sorted_incidents();
        let uniques: Vec<String> = Lineage::build(&snap).volumes.iter().filter_map(|v| v.unique_name.clone())
            .chain(["kubernetes.io/csi/rbd.csi.ceph.com^nobody".to_string()]).collect();
        let mut lin = Lineage::build(&snap);
        let mut pool = Snapshot::default();
        for batch in batches {
            let old = snap.clone();
            for (kind, at) in batch {
                step(&mut snap, &mut pool, &uniques, kind, at);
            }
            let before = lin.volumes.clone();
            let said = apply(&mut lin, &old, &snap);
            let whole = Lineage::build(&snap);
            prop_assert_eq!(dump(&lin), dump(&whole));
            if let Applied::Volumes(said) = said {
                for (a, b) in before.iter().zip(&lin.volumes) {
                    // the pods' joins are said by apply_pods
                    let (mut a, mut b) = (a.clone(), b.clone());
                    (a.pods, b.pods) = (vec![], vec![]);
                    prop_assert!(a == b || said.contains(&b.pv), "{} changed unsaid", b.pv);
                }
            }
        }
    }
}

/// Two nodes sharing an InternalIP: the address names the last in name order, after a change
/// of either as after a build.
#[test]
fn shared_address_follows_the_nodes_order() {
    let mut snap = sorted_incidents();
    let ip = format!("{}", crate::model::kube::internal_ips(&snap.nodes[0])[0]);
    let old = snap.clone();
    change(&mut snap.nodes, 1, |n| {
        let st = n.status.get_or_insert_with(Default::default);
        st.addresses = Some(vec![NodeAddress { type_: "InternalIP".into(), address: ip.clone() }]);
    });
    let mut lin = Lineage::build(&old);
    apply(&mut lin, &old, &snap);
    assert!(!lin.ips_unique());
    assert_eq!(dump(&lin), dump(&Lineage::build(&snap)));
    assert_eq!(lin.node_for_ip(ip.parse().expect("an IP")), snap.nodes[1].metadata.name.as_deref());
    let old = snap.clone();
    change(&mut snap.nodes, 0, |n| n.metadata.uid = Some("changed".into()));
    apply(&mut lin, &old, &snap);
    assert_eq!(dump(&lin), dump(&Lineage::build(&snap)));
}
