//! Reading the simulated cluster's objects (JSON values as the API server stores them): node
//! readiness and addresses, a PV's image and unique volume name, a pod's claim and volume, and the
//! Warning events the simulated kubelet and attach-detach controller post.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::store::{ObjKey, Res, seconds};
use super::world::World;
use crate::model::ceph::EntityAddr;
use crate::model::kube::Readiness;

pub(super) fn age(now: Timestamp, t: &Value) -> i64 {
    t.as_str().and_then(|s| s.parse::<Timestamp>().ok()).map(|t| (now - t).get_seconds()).unwrap_or(i64::MAX)
}

/// Is the node's Ready condition `True`?
pub fn node_ready(n: &Value) -> bool {
    n["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && Readiness::from_status(c["status"].as_str()).is_ready())
}

/// The node's InternalIP.
pub fn node_ip(n: &Value) -> Option<String> {
    n["status"]["addresses"].as_array()?.iter().find(|a| a["type"] == "InternalIP")?["address"]
        .as_str()
        .map(str::to_string)
}

/// A PV's image spec (`pool/image`), from `spec.csi.volumeAttributes` or `spec.rbd`.
pub fn pv_image(pv: &Value) -> Option<String> {
    let s = &pv["spec"];
    if let (Some(p), Some(i)) =
        (s["csi"]["volumeAttributes"]["pool"].as_str(), s["csi"]["volumeAttributes"]["imageName"].as_str())
    {
        return Some(format!("{p}/{i}"));
    }
    Some(format!("{}/{}", s["rbd"]["pool"].as_str()?, s["rbd"]["image"].as_str()?))
}

/// The name kubelet and the attach-detach controller use for a PV in `volumesAttached` /
/// `volumesInUse`.
pub fn unique_name(pv: &Value) -> Option<String> {
    let s = &pv["spec"];
    if let (Some(d), Some(h)) = (s["csi"]["driver"].as_str(), s["csi"]["volumeHandle"].as_str()) {
        return Some(format!("kubernetes.io/csi/{d}^{h}"));
    }
    Some(format!("kubernetes.io/rbd/{}:{}", s["rbd"]["pool"].as_str()?, s["rbd"]["image"].as_str()?))
}

pub(super) fn is_rwo(pv: &Value) -> bool {
    pv["spec"]["accessModes"]
        .as_array()
        .is_none_or(|m| m.iter().all(|x| x == "ReadWriteOnce" || x == "ReadWriteOncePod"))
}

pub(super) fn claim_of(pod: &Value) -> Option<String> {
    pod["spec"]["volumes"]
        .as_array()?
        .iter()
        .find_map(|v| v["persistentVolumeClaim"]["claimName"].as_str().map(str::to_string))
}

pub(super) fn key(pod: &Value) -> String {
    format!(
        "{}/{}",
        pod["metadata"]["namespace"].as_str().unwrap_or(""),
        pod["metadata"]["name"].as_str().unwrap_or("")
    )
}

pub(super) fn deleting(o: &Value) -> bool {
    o["metadata"]["deletionTimestamp"].is_string()
}

pub(super) fn waiting(pod: &Value) -> bool {
    !deleting(pod) && pod["status"]["phase"] != "Running"
}

pub(super) struct Vol {
    pub(super) pv_name: String,
    pub(super) pv: Value,
    pub(super) image: Option<String>,
    pub(super) unique: Option<String>,
}

pub(super) fn volume_of(w: &World, pod: &Value) -> Option<Vol> {
    let ns = pod["metadata"]["namespace"].as_str()?;
    let pvc = w.store.get(&ObjKey::new(Res::Pvc, ns, &claim_of(pod)?))?;
    let pv_name = pvc["spec"]["volumeName"].as_str()?.to_string();
    let pv = w.store.get(&ObjKey::new(Res::Pv, "", &pv_name))?.clone();
    Some(Vol { image: pv_image(&pv), unique: unique_name(&pv), pv_name, pv })
}

pub(super) fn ip_of(addr: &str) -> Option<String> {
    EntityAddr::parse(addr).map(|a| a.ip.to_string())
}

/// Copies of the nodes for which `keep` holds.
pub(super) fn nodes_where(w: &World, keep: impl Fn(&Value) -> bool) -> Vec<Value> {
    w.store.list_where(Res::Node, None, keep)
}

pub(super) fn node(w: &World, name: &str) -> Option<Value> {
    w.store.get(&ObjKey::new(Res::Node, "", name)).cloned()
}

pub(super) fn event(w: &mut World, p: &Value, reason: &str, message: &str, now: Timestamp) {
    let ns = p["metadata"]["namespace"].as_str().unwrap_or("");
    let name = p["metadata"]["name"].as_str().unwrap_or("");
    let n = w.store.rv();
    let e = json!({
        "metadata": {"namespace": ns, "name": format!("{name}.sim{n}")},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": name, "uid": p["metadata"]["uid"]},
        "reason": reason, "message": message, "type": "Warning", "count": 1,
        "firstTimestamp": seconds(now), "lastTimestamp": seconds(now),
        "source": {"component": if reason.contains("Attach") { "attachdetach-controller" } else { "kubelet" },
                   "host": p["spec"]["nodeName"]},
    });
    let _ = w.create(Res::Event, e);
}

pub(super) fn has_event(w: &World, p: &Value, reason: &str) -> bool {
    w.store
        .list(Res::Event, p["metadata"]["namespace"].as_str())
        .iter()
        .any(|e| e["involvedObject"]["name"] == p["metadata"]["name"] && e["reason"] == reason)
}
