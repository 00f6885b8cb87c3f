//! The simulated kubelets: on Ready nodes they finish deleted pods (unless a device is held busy
//! in another mount namespace), tear volumes down, and attach and mount volumes for waiting pods
//! once nothing blocks them (a VolumeAttachment on another node, a lock or a watcher from another
//! host, the old pod of the same claim still tearing down on the same node). Lost nodes do nothing:
//! their pods stay Terminating and their watchers stay until fenced.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::controllers::app_pod_status;
use super::objects::{
    Vol, age, claim_of, deleting, event, has_event, ip_of, is_rwo, key, node, node_ip, node_ready, pv_image,
    unique_name, volume_of, waiting,
};
use super::store::{ObjKey, Res, seconds};
use super::world::World;
use crate::model::ceph::{Lock, Watcher};

/// Kubelet on a Ready node tears a volume down: unmap (the watcher and in-tree lock of that host
/// go), `volumesInUse` / `volumesAttached` lose it, the VolumeAttachment is detached.
pub(super) fn teardown(w: &mut World, node_name: &str, vol: &Vol) {
    let Some(n) = node(w, node_name) else { return };
    let ip = node_ip(&n);
    if let (Some(img), Some(ip)) = (vol.image.as_ref().and_then(|i| w.ceph.images.get_mut(i)), &ip) {
        img.watchers.retain(|(wt, _)| ip_of(&wt.address).as_ref() != Some(ip));
        img.locks.retain(|l| ip_of(&l.address).as_ref() != Some(ip));
    }
    if let Some(u) = &vol.unique {
        let u = u.clone();
        let _ = w.apply(|s| {
            s.update(&ObjKey::new(Res::Node, "", node_name), |n| {
                for f in ["volumesInUse", "volumesAttached"] {
                    if let Some(a) = n["status"][f].as_array_mut() {
                        a.retain(|x| x != u.as_str() && x["name"] != u.as_str());
                    }
                }
            })
        });
    }
    for va in w.store.list(Res::VolumeAttachment, None) {
        if va["spec"]["nodeName"] == node_name && va["spec"]["source"]["persistentVolumeName"] == vol.pv_name.as_str() {
            w.finalize(&ObjKey::of(Res::VolumeAttachment, &va));
        }
    }
}

pub(super) fn finish_operations(w: &mut World, now: Timestamp) {
    let (done, pending): (Vec<_>, Vec<_>) = std::mem::take(&mut w.operations).into_iter().partition(|t| t.at <= now);
    w.operations = pending;
    for super::world::Teardown { node: node_name, pv: pv_name, .. } in done {
        let Some(pv) = w.store.get(&ObjKey::new(Res::Pv, "", &pv_name)).cloned() else { continue };
        let vol = Vol { image: pv_image(&pv), unique: unique_name(&pv), pv_name: pv_name.clone(), pv };
        teardown(w, &node_name, &vol);
        w.react(format!("kubelet on {node_name}: teardown of {pv_name} finished"));
    }
}

/// Pods whose owner stops them now (`[[pod]] stops`, a scale-down): kubelet on their Ready node
/// stops them, tears their volume down (unless another Running pod there uses it) and the pod
/// is removed.
pub(super) fn stop_pods(w: &mut World, now: Timestamp) {
    let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut w.stops).into_iter().partition(|(_, at)| *at <= now);
    w.stops = later;
    for (k, _) in due {
        let Some((ns, name)) = k.split_once('/') else { continue };
        let Some(p) = w.store.get(&ObjKey::new(Res::Pod, ns, name)).cloned() else { continue };
        let node_name = p["spec"]["nodeName"].as_str().unwrap_or("").to_string();
        if let Some(v) = volume_of(w, &p) {
            let others = w.store.iter(Res::Pod).any(|(_, o)| {
                key(o) != key(&p)
                    && o["spec"]["nodeName"] == node_name.as_str()
                    && o["status"]["phase"] == "Running"
                    && volume_of(w, o).is_some_and(|ov| ov.pv_name == v.pv_name)
            });
            if !others {
                teardown(w, &node_name, &v);
            }
        }
        if w.finalize(&ObjKey::of(Res::Pod, &p)) {
            w.react(format!("owner of {k}: scaled down; kubelet on {node_name} stopped the pod"));
        }
    }
}

pub(super) fn held(w: &World, node_name: &str, pv: &str) -> bool {
    w.holders.iter().any(|h| h.node == node_name && h.pv == pv)
}

pub(super) fn finish_deleted_pods(w: &mut World, now: Timestamp) {
    for p in w.store.list_where(Res::Pod, None, deleting) {
        let node_name = p["spec"]["nodeName"].as_str().unwrap_or("").to_string();
        if !node(w, &node_name).is_some_and(|n| node_ready(&n)) {
            continue; // a lost node's kubelet never confirms
        }
        if age(now, &p["metadata"]["deletionTimestamp"]) < w.timings.terminate_seconds {
            continue;
        }
        let vol = volume_of(w, &p);
        if let Some(v) = &vol {
            if held(w, &node_name, &v.pv_name) {
                busy_event(w, &p, &node_name, now);
                continue;
            }
            let others = w.store.iter(Res::Pod).any(|(_, o)| {
                key(o) != key(&p)
                    && !deleting(o)
                    && o["spec"]["nodeName"] == node_name.as_str()
                    && o["status"]["phase"] == "Running"
                    && volume_of(w, o).is_some_and(|ov| ov.pv_name == v.pv_name)
            });
            if !others {
                teardown(w, &node_name, v);
            }
        }
        if w.finalize(&ObjKey::of(Res::Pod, &p)) {
            w.react(format!("kubelet on {node_name}: pod {} stopped and removed", key(&p)));
        }
    }
}

pub(super) fn busy_event(w: &mut World, p: &Value, node_name: &str, now: Timestamp) {
    let id = format!("{}#busy", key(p));
    if !w.emitted.insert(id) || has_event(w, p, "FailedUnMount") {
        return;
    }
    let device =
        w.holders.iter().find(|h| h.node == node_name).map(|h| h.device.clone()).unwrap_or_else(|| "/dev/rbd0".into());
    let pv = volume_of(w, p).map(|v| v.pv_name).unwrap_or_default();
    let msg = format!(
        "UnmountDevice failed for volume \"{pv}\" : rbd: failed to unmap device {device}, error exit status 16, rbd output: rbd: sysfs write failed\nrbd: unmap failed: (16) Device or resource busy"
    );
    event(w, p, "FailedUnMount", &msg, now);
}

/// Why a waiting pod cannot mount yet, with the event kubelet or the attach-detach controller
/// reports; `None` when nothing blocks it.
pub(super) fn blocker(
    w: &World,
    p: &Value,
    node_name: &str,
    ip: Option<&str>,
    vol: &Vol,
) -> Option<(&'static str, String)> {
    let ns = p["metadata"]["namespace"].as_str().unwrap_or("");
    if let Some(driver) = vol.pv["spec"]["csi"]["driver"].as_str()
        && w.unregistered.iter().any(|(n, _, _)| n == node_name)
    {
        return Some((
            "FailedMount",
            format!(
                "MountVolume.MountDevice failed for volume \"{}\" : kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: driver name {driver} not found in the list of registered CSI drivers",
                vol.pv_name
            ),
        ));
    }
    let restage = w.store.iter(Res::Pod).any(|(k, o)| {
        k.ns == ns
            && key(o) != key(p)
            && deleting(o)
            && o["spec"]["nodeName"] == node_name
            && claim_of(o) == claim_of(p)
    });
    let in_flight = w.operations.iter().any(|t| t.node == node_name && t.pv == vol.pv_name);
    if restage || in_flight {
        let h = vol.pv["spec"]["csi"]["volumeHandle"].as_str().unwrap_or(&vol.pv_name);
        return Some((
            "FailedMount",
            format!(
                "MountVolume.MountDevice failed for volume \"{}\" : rpc error: code = Aborted desc = an operation with the given Volume ID {h} already exists",
                vol.pv_name
            ),
        ));
    }
    if !is_rwo(&vol.pv) {
        return None;
    }
    let elsewhere_va = w.store.iter(Res::VolumeAttachment).any(|(_, v)| {
        v["spec"]["source"]["persistentVolumeName"] == vol.pv_name.as_str() && v["spec"]["nodeName"] != node_name
    });
    let elsewhere_node = vol.unique.as_ref().is_some_and(|u| {
        w.store.iter(Res::Node).any(|(_, n)| {
            n["metadata"]["name"] != node_name
                && n["status"]["volumesAttached"].as_array().is_some_and(|a| a.iter().any(|x| x["name"] == u.as_str()))
        })
    });
    if elsewhere_va || elsewhere_node {
        // the attach-detach controller's wording changed in 1.37 (kubernetes/kubernetes#138836)
        let msg = if w.version >= (1, 37) {
            "Waiting for detach for volume \"{}\" Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node"
        } else {
            "Multi-Attach error for volume \"{}\" Volume is already exclusively attached to one node and can't be attached to another"
        };
        return Some(("FailedAttachVolume", msg.replace("{}", &vol.pv_name)));
    }
    let img = vol.image.as_ref().and_then(|i| w.ceph.images.get(i))?;
    let foreign = |addr: &str| ip_of(addr).as_deref() != ip;
    if img.locks.iter().any(|l| foreign(&l.address)) {
        return Some((
            "FailedMount",
            format!(
                "MountVolume.SetUp failed for volume \"{}\" : rbd: image {} is locked by other nodes",
                vol.pv_name,
                vol.image.as_deref().unwrap_or("")
            ),
        ));
    }
    if img.watchers.iter().any(|(wt, _)| foreign(&wt.address)) {
        return Some((
            "FailedMount",
            format!(
                "MountVolume.WaitForAttach failed for volume \"{}\" : rbd image {} is still being used",
                vol.pv_name,
                vol.image.as_deref().unwrap_or("")
            ),
        ));
    }
    None
}

pub(super) fn mount_waiting_pods(w: &mut World, now: Timestamp) {
    for p in w.store.list_where(Res::Pod, None, waiting) {
        let node_name = p["spec"]["nodeName"].as_str().unwrap_or("").to_string();
        let Some(n) = node(w, &node_name).filter(node_ready) else { continue };
        let Some(vol) = volume_of(w, &p) else { continue };
        let ip = node_ip(&n);
        let k = key(&p);
        if let Some((reason, msg)) = blocker(w, &p, &node_name, ip.as_deref(), &vol) {
            w.free_since.remove(&k);
            if w.emitted.insert(format!("{k}#{reason}#{}", &msg[..msg.len().min(24)])) && !has_event(w, &p, reason) {
                event(w, &p, reason, &msg, now);
            }
            continue;
        }
        let since = *w.free_since.entry(k.clone()).or_insert(now);
        if (now - since).get_seconds() < w.timings.mount_seconds {
            continue;
        }
        w.free_since.remove(&k);
        mount(w, &p, &node_name, ip.as_deref(), &vol, now);
    }
}

pub(super) fn mount(w: &mut World, p: &Value, node_name: &str, ip: Option<&str>, vol: &Vol, now: Timestamp) {
    let csi = vol.pv["spec"]["csi"].is_object();
    if csi
        && !w.store.list(Res::VolumeAttachment, None).iter().any(|v| {
            v["spec"]["nodeName"] == node_name && v["spec"]["source"]["persistentVolumeName"] == vol.pv_name.as_str()
        })
    {
        let h = vol.pv["spec"]["csi"]["volumeHandle"].as_str().unwrap_or("");
        let name = format!(
            "csi-{}",
            crate::remedy::run::backup::sha256_hex(format!("{h}rbd.csi.ceph.com{node_name}").as_bytes())
        );
        let _ = w.create(
            Res::VolumeAttachment,
            json!({"metadata": {"name": name, "finalizers": ["external-attacher/rbd-csi-ceph-com"]},
                   "spec": {"attacher": "rbd.csi.ceph.com", "nodeName": node_name, "source": {"persistentVolumeName": vol.pv_name}},
                   "status": {"attached": true}}),
        );
    }
    if let Some(u) = vol.unique.clone() {
        let _ = w.apply(|s| {
            s.update(&ObjKey::new(Res::Node, "", node_name), |n| {
                let st = &mut n["status"];
                if !st["volumesInUse"].is_array() {
                    st["volumesInUse"] = json!([]);
                }
                if !st["volumesAttached"].is_array() {
                    st["volumesAttached"] = json!([]);
                }
                if let Some(a) = st["volumesInUse"].as_array_mut().filter(|a| !a.iter().any(|x| x == u.as_str())) {
                    a.push(json!(u));
                }
                if let Some(a) =
                    st["volumesAttached"].as_array_mut().filter(|a| !a.iter().any(|x| x["name"] == u.as_str()))
                {
                    a.push(json!({"name": u, "devicePath": ""}));
                }
            })
        });
    }
    w.next_client += 1;
    let client = w.next_client;
    if let (Some(img), Some(ip)) = (vol.image.as_ref().and_then(|i| w.ceph.images.get_mut(i)), ip) {
        let address = format!("{ip}:0/{}", 3_000_000_000u64 + client);
        if !csi {
            img.locks.push(Lock {
                id: format!("kubelet_lock_magic_{node_name}"),
                locker: format!("client.{client}"),
                address: address.clone(),
            });
        }
        img.watchers.push((Watcher { address, client, cookie: 18_446_462_598_732_840_000 + client }, None));
    }
    let running = app_pod_status(true, &seconds(now));
    let _ = w.apply(|s| s.update(&ObjKey::of(Res::Pod, p), |pod| pod["status"] = running));
    w.react(format!("kubelet on {node_name}: {} mounted {} and is Running", key(p), vol.pv_name));
}
