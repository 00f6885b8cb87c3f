//! csi-addons `CSIAddonsNode` (`csiaddons.openshift.io/v1alpha1`, namespaced, plural
//! `csiaddonsnodes`): one per CSI-Addons sidecar (a ceph-csi node plugin or controller). Fields as
//! published in csi-addons/kubernetes-csi-addons v0.14.0 `api/csiaddons/v1alpha1/
//! csiaddonsnode_types.go`; only what the console reads is kept:
//! - `spec.driver.name` (`rbd.csi.ceph.com`), `spec.driver.nodeID` (the driver's `--nodeid`: the
//!   Node's name in ceph-csi and Rook deployments);
//! - `status.state` (`Connected`, `Failed`, `Retrying`);
//! - `status.networkFenceClientStatus[]` `{networkFenceClassName, ClientDetails[] {id, cidrs[]}}`
//!   (sic: the Go tag of `ClientDetails` is capitalised): the clients of that node a fence must
//!   cover, as the driver's `GetFenceClients` answered (ceph-csi: its Ceph client address as a
//!   `/32`). The controller fills it only for the classes named in the object's annotation
//!   `csiaddons.openshift.io/networkfenceclass-names`.

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use super::ceph::{BlocklistEntry, BlocklistTarget, EntityAddr, parse_range};

/// The resource (plural); group and version are [`super::fence::GROUP`] / [`super::fence::VERSION`].
pub const PLURAL: &str = "csiaddonsnodes";
/// The kind's name.
pub const KIND: &str = "CSIAddonsNode";

/// One fence client of a node: `status.networkFenceClientStatus[].ClientDetails[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FenceClient {
    /// `networkFenceClassName` of the status entry it is listed under.
    pub class: String,
    /// `id`: the driver's client id (ceph-csi: the Ceph cluster's fsid).
    pub id: String,
    /// `cidrs`: the client's networks (`198.18.5.20/32`).
    pub cidrs: Vec<String>,
}

/// One CSIAddonsNode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsiAddonsNode {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.driver.name`.
    pub driver: String,
    /// `spec.driver.nodeID`: the node's name.
    pub node_id: String,
    /// `status.state`; empty before the controller connected.
    #[serde(default)]
    pub state: String,
    /// Every `status.networkFenceClientStatus[].ClientDetails[]`.
    #[serde(default)]
    pub fence_clients: Vec<FenceClient>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Wire {
    metadata: Meta,
    spec: Spec,
    status: Status,
}
#[derive(Deserialize, Default)]
#[serde(default)]
struct Meta {
    namespace: String,
    name: String,
}
#[derive(Deserialize, Default)]
#[serde(default)]
struct Spec {
    driver: Driver,
}
#[derive(Deserialize, Default)]
#[serde(default)]
struct Driver {
    name: String,
    #[serde(rename = "nodeID")]
    node_id: String,
}
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Status {
    state: String,
    network_fence_client_status: Vec<ClientStatus>,
}
#[derive(Deserialize, Default)]
#[serde(default)]
struct ClientStatus {
    #[serde(rename = "networkFenceClassName")]
    class: String,
    #[serde(rename = "ClientDetails")]
    clients: Vec<Detail>,
}
#[derive(Deserialize, Default)]
#[serde(default)]
struct Detail {
    id: String,
    cidrs: Vec<String>,
}

impl CsiAddonsNode {
    /// Reads one object as the API server serves it. Errors: not a JSON object of that shape.
    pub fn from_json(v: serde_json::Value) -> Result<Self, serde_json::Error> {
        let w: Wire = serde_json::from_value(v)?;
        let fence_clients = w
            .status
            .network_fence_client_status
            .into_iter()
            .flat_map(|s| {
                let class = s.class;
                s.clients.into_iter().map(move |d| FenceClient { class: class.clone(), id: d.id, cidrs: d.cidrs })
            })
            .collect();
        Ok(CsiAddonsNode {
            namespace: w.metadata.namespace,
            name: w.metadata.name,
            driver: w.spec.driver.name,
            node_id: w.spec.driver.node_id,
            state: w.status.state,
            fence_clients,
        })
    }

    /// The object in the API's shape (what [`CsiAddonsNode::from_json`] reads back), the fields
    /// kept, one status entry per fence client.
    pub fn to_json(&self) -> serde_json::Value {
        let status: Vec<serde_json::Value> = self
            .fence_clients
            .iter()
            .map(|c| {
                serde_json::json!({"networkFenceClassName": c.class,
                                   "ClientDetails": [{"id": c.id, "cidrs": c.cidrs}]})
            })
            .collect();
        serde_json::json!({
            "apiVersion": format!("{}/{}", super::fence::GROUP, super::fence::VERSION), "kind": KIND,
            "metadata": {"namespace": self.namespace, "name": self.name},
            "spec": {"driver": {"name": self.driver, "nodeID": self.node_id}},
            "status": {"state": self.state, "networkFenceClientStatus": status},
        })
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Its fence clients' networks, parsed (a bare IP as its host network); unparsable ones skipped.
    pub fn nets(&self) -> Vec<IpNet> {
        self.fence_clients
            .iter()
            .flat_map(|c| &c.cidrs)
            .filter_map(|c| parse_range(c).or_else(|| c.trim().parse::<std::net::IpAddr>().ok().map(IpNet::from)))
            .map(|n| n.trunc())
            .collect()
    }

    /// True when `entry` is one of this node's fence clients: a range equal to one of its
    /// networks, or a whole-host entry inside one (what ceph-csi adds when a NetworkFence of these
    /// CIDRs is `Fenced`, or when it fences an out-of-service node's client itself).
    pub fn covers(&self, entry: &BlocklistEntry) -> bool {
        let nets = self.nets();
        match &entry.target {
            BlocklistTarget::Range(r) => parse_range(r).is_some_and(|r| nets.contains(&r.trunc())),
            BlocklistTarget::Addr(a) => EntityAddr::parse(a)
                .filter(EntityAddr::is_whole_host)
                .is_some_and(|a| nets.iter().any(|n| n.contains(&a.ip))),
        }
    }
}

/// The CSIAddonsNodes of a cluster: `None` when csi-addons is not installed (the list answered
/// 404) or they were not read.
pub type CsiAddonsNodes = Option<Vec<CsiAddonsNode>>;

/// The first CSIAddonsNode of `nodes` whose fence clients cover `entry`.
pub fn covering<'a>(nodes: &'a [CsiAddonsNode], entry: &BlocklistEntry) -> Option<&'a CsiAddonsNode> {
    nodes.iter().find(|n| !n.node_id.is_empty() && n.covers(entry))
}

#[cfg(test)]
#[path = "csiaddons_node_tests.rs"]
mod tests;
