//! csi-addons `NetworkFence` (`csiaddons.openshift.io/v1alpha1`, cluster-scoped, plural
//! `networkfences`): a request to fence (or unfence) CIDRs through a CSI driver; ceph-csi turns
//! `Fenced` into `ceph osd blocklist range add` per CIDR. Fields as published in
//! csi-addons/kubernetes-csi-addons `api/csiaddons/v1alpha1/networkfence_types.go`; only what the
//! console reads is kept.

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use super::ceph::{BlocklistEntry, BlocklistTarget, EntityAddr, parse_range};

/// The API group.
pub const GROUP: &str = "csiaddons.openshift.io";
/// The version.
pub const VERSION: &str = "v1alpha1";
/// The resource (plural).
pub const PLURAL: &str = "networkfences";

/// One NetworkFence.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkFence {
    /// `metadata.name`.
    pub name: String,
    /// `spec.networkFenceClassName` (empty when the deprecated `spec.driver` is used).
    pub class: String,
    /// `spec.driver` (deprecated; empty with a class).
    pub driver: String,
    /// `spec.fenceState`: `Fenced` or `Unfenced`.
    pub fence_state: String,
    /// `spec.cidrs`.
    pub cidrs: Vec<String>,
    /// `status.result`: `Succeeded`, `Failed`, or empty before the controller acted.
    pub result: String,
    /// `status.message`: the controller's word (`fencing operation successful`, or the error).
    #[serde(default)]
    pub message: String,
}

/// The wire shape, for [`NetworkFence::from_json`].
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Wire {
    metadata: WireMeta,
    spec: WireSpec,
    status: WireStatus,
}
#[derive(Deserialize, Default)]
#[serde(default)]
struct WireMeta {
    name: String,
}
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WireSpec {
    network_fence_class_name: String,
    driver: String,
    fence_state: String,
    cidrs: Vec<String>,
}
#[derive(Deserialize, Default)]
#[serde(default)]
struct WireStatus {
    result: String,
    message: String,
}

impl NetworkFence {
    /// Reads one object as the API server serves it. Errors: not a JSON object of that shape.
    pub fn from_json(v: serde_json::Value) -> Result<Self, serde_json::Error> {
        let w: Wire = serde_json::from_value(v)?;
        Ok(NetworkFence {
            name: w.metadata.name,
            class: w.spec.network_fence_class_name,
            driver: w.spec.driver,
            fence_state: w.spec.fence_state,
            cidrs: w.spec.cidrs,
            result: w.status.result,
            message: w.status.message,
        })
    }

    /// The object in the API's shape (what [`NetworkFence::from_json`] reads back): the fields
    /// kept, under `metadata`, `spec` and `status`, with `apiVersion` and `kind`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "apiVersion": format!("{GROUP}/{VERSION}"), "kind": KIND,
            "metadata": {"name": self.name},
            "spec": {"networkFenceClassName": self.class, "driver": self.driver,
                     "fenceState": self.fence_state, "cidrs": self.cidrs},
            "status": {"result": self.result, "message": self.message},
        })
    }

    /// True when it asks for its CIDRs to be fenced.
    pub fn is_fenced(&self) -> bool {
        self.fence_state == "Fenced"
    }

    /// Its CIDRs, parsed (a bare IP as its host network); unparsable ones skipped.
    pub fn nets(&self) -> Vec<IpNet> {
        self.cidrs
            .iter()
            .filter_map(|c| parse_range(c).or_else(|| c.trim().parse::<std::net::IpAddr>().ok().map(IpNet::from)))
            .map(|n| n.trunc())
            .collect()
    }

    /// True when `entry` is this fence's own: the fence is `Fenced` and the entry is a range equal
    /// to one of its CIDRs, or a whole-host entry inside one (what ceph-csi adds for it).
    pub fn owns(&self, entry: &BlocklistEntry) -> bool {
        if !self.is_fenced() {
            return false;
        }
        let nets = self.nets();
        match &entry.target {
            BlocklistTarget::Range(r) => parse_range(r).is_some_and(|r| nets.contains(&r.trunc())),
            BlocklistTarget::Addr(a) => EntityAddr::parse(a)
                .filter(EntityAddr::is_whole_host)
                .is_some_and(|a| nets.iter().any(|n| n.contains(&a.ip))),
        }
    }
}

/// The kind's name.
pub const KIND: &str = "NetworkFence";
/// `spec.fenceState` that fences.
pub const FENCED: &str = "Fenced";
/// `spec.fenceState` that lifts the fence.
pub const UNFENCED: &str = "Unfenced";

/// The NetworkFence manifest the console creates: cluster-scoped `name`, `spec.cidrs`,
/// `spec.fenceState: Fenced` and `spec.networkFenceClassName` (the class carries the driver and
/// its secret; the deprecated `spec.driver` / `spec.secret` are not used). Labelled
/// `app.kubernetes.io/managed-by: unstick`.
pub fn manifest(name: &str, class: &str, cidrs: &[String]) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": format!("{GROUP}/{VERSION}"),
        "kind": KIND,
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "unstick"}},
        "spec": {"networkFenceClassName": class, "fenceState": FENCED, "cidrs": cidrs},
    })
}

/// One NetworkFenceClass (`csiaddons.openshift.io/v1alpha1`, cluster-scoped, plural
/// `networkfenceclasses`): the driver (`spec.provisioner`) and its parameters a NetworkFence
/// names. Fields as published in `api/csiaddons/v1alpha1/networkfenceclass_types.go`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkFenceClass {
    /// `metadata.name`.
    pub name: String,
    /// `spec.provisioner`: the CSI driver (`rbd.csi.ceph.com`).
    pub provisioner: String,
}

/// The classes' resource (plural).
pub const CLASS_PLURAL: &str = "networkfenceclasses";

impl NetworkFenceClass {
    /// Reads one object as the API server serves it. Errors: not a JSON object of that shape.
    pub fn from_json(v: serde_json::Value) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct W {
            metadata: WireMeta,
            spec: S,
        }
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct S {
            provisioner: String,
        }
        let w: W = serde_json::from_value(v)?;
        Ok(NetworkFenceClass { name: w.metadata.name, provisioner: w.spec.provisioner })
    }
}

impl NetworkFenceClass {
    /// The object in the API's shape (what [`NetworkFenceClass::from_json`] reads back).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "apiVersion": format!("{GROUP}/{VERSION}"), "kind": "NetworkFenceClass",
            "metadata": {"name": self.name}, "spec": {"provisioner": self.provisioner},
        })
    }
}

/// The first class of `classes` whose provisioner is `driver` (the class a fence of that
/// driver's volumes names).
pub fn class_for<'a>(classes: &'a [NetworkFenceClass], driver: &str) -> Option<&'a NetworkFenceClass> {
    classes.iter().find(|c| c.provisioner == driver)
}

/// The NetworkFences of a cluster: `None` when csi-addons is not installed (the list answered
/// 404) or they were not read.
pub type NetworkFences = Option<Vec<NetworkFence>>;

/// The first fence of `fences` that owns `entry`.
pub fn owner_of<'a>(fences: &'a [NetworkFence], entry: &BlocklistEntry) -> Option<&'a NetworkFence> {
    fences.iter().find(|f| f.owns(entry))
}
