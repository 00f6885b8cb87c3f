//! Attribution: which node a Ceph client address (a watcher, a lock holder, a blocklist entry)
//! belongs to, and the proof that ties it. Real networks break "the node's InternalIP": Ceph's
//! public network on a second interface, ceph-csi node plugins on pod networking, Rook's Multus
//! holder pods, overlay addresses (rook#11201, Rook PR #12286); Rook turned its automatic fencing
//! off because it blocklisted wrong addresses (rook PR #14831, issue #14832). So each tie names
//! its proof, tried in this order:
//! 1. [`Proof::NodeAddress`]: any `status.addresses` entry of a node (dual stack, every type);
//! 2. [`Proof::ImageMeta`]: ceph-csi's client-address image metadata
//!    ([`crate::model::ceph::RBD_CLIENT_ADDRESS_PREFIX`]), written at NodeStage with
//!    `--enable-fencing`;
//! 3. [`Proof::FenceClient`]: a network a csi-addons CSIAddonsNode lists among its fence clients
//!    (`status.networkFenceClientStatus[].ClientDetails[].cidrs`, the driver's `GetFenceClients`
//!    answer), tied to its `spec.driver.nodeID`;
//! 4. [`Proof::ClientPod`]: the pod IP of a ceph-csi node plugin or Rook holder pod, by the pod's
//!    node ([`crate::model::kube::is_ceph_client_pod`]);
//! 5. [`Proof::Probe`]: an address `unstick probe` found on the node;
//! 6. [`Proof::Rule`] then [`Proof::Annotation`]: the operator's mapping (`diagnose.address_rules`,
//!    `diagnose.node_address_annotation`).
//!
//! Within proofs 2–6 an address two nodes claim ties to neither (both become candidates). An
//! address nothing ties is [`Attribution::Unattributed`] with its [`Candidate`]s; the fencing
//! step refuses it without a typed override (`remedy::action::safety`). Pure: built from a
//! [`Snapshot`] and the config.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::OnceLock;

use ipnet::IpNet;

use crate::config::DiagnoseConfig;
use crate::lineage::{Lineage, VolumeLineage};
use crate::model::Snapshot;
use crate::model::ceph::{EntityAddr, client_addresses};
use crate::model::key_of;
use crate::model::kube::{is_ceph_client_pod, node_addresses, pod_ips, pod_node};

/// How an address was tied to a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// One of the node's `status.addresses`, of this `type` (`InternalIP`, `ExternalIP`, ...).
    NodeAddress {
        /// The address type.
        kind: String,
    },
    /// ceph-csi's client-address image metadata: the key (which names the node).
    ImageMeta {
        /// The metadata key.
        key: String,
    },
    /// A fence client network of the node's csi-addons CSIAddonsNode.
    FenceClient {
        /// `namespace/name` of the CSIAddonsNode.
        object: String,
        /// The network it lists.
        net: IpNet,
    },
    /// The pod IP of a ceph-csi node plugin or holder pod running on the node.
    ClientPod {
        /// `namespace/name` of the pod.
        pod: String,
    },
    /// An address `unstick probe` reported on the node.
    Probe,
    /// An operator rule `<CIDR>=<node>` of `diagnose.address_rules`.
    Rule {
        /// The rule's network.
        net: IpNet,
    },
    /// The node's annotation `diagnose.node_address_annotation` lists it.
    Annotation {
        /// The annotation key.
        key: String,
    },
}

impl Proof {
    /// A short name of the kind of proof: `node address`, `image metadata`, `client pod`,
    /// `fence client`, `probe`, `rule`, `annotation`.
    pub fn kind(&self) -> &'static str {
        match self {
            Proof::NodeAddress { .. } => "node address",
            Proof::ImageMeta { .. } => "image metadata",
            Proof::FenceClient { .. } => "fence client",
            Proof::ClientPod { .. } => "client pod",
            Proof::Probe => "probe",
            Proof::Rule { .. } => "rule",
            Proof::Annotation { .. } => "annotation",
        }
    }
}

impl fmt::Display for Proof {
    /// `InternalIP`, `image-meta <key>`, `CSIAddonsNode <ns/name> fence client <net>`, `pod <ns/name>`, `unstick probe`, `rule <net>`,
    /// `annotation <key>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Proof::NodeAddress { kind } => f.write_str(kind),
            Proof::ImageMeta { key } => write!(f, "image-meta {key}"),
            Proof::FenceClient { object, net } => write!(f, "CSIAddonsNode {object} fence client {net}"),
            Proof::ClientPod { pod } => write!(f, "pod {pod}"),
            Proof::Probe => f.write_str("unstick probe"),
            Proof::Rule { net } => write!(f, "rule {net}"),
            Proof::Annotation { key } => write!(f, "annotation {key}"),
        }
    }
}

/// An address tied to a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tie {
    /// The node's name.
    pub node: String,
    /// What ties it.
    pub proof: Proof,
}

impl fmt::Display for Tie {
    /// `node <name> by <proof>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node {} by {}", self.node, self.proof)
    }
}

/// Why a node is a candidate for an address nothing ties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CandidateWhy {
    /// The node claims the address by this proof, and so does another node.
    Claimed(Proof),
    /// The image whose watcher or lock this is is attached to the node (VolumeAttachment,
    /// `volumesAttached`, `volumesInUse`).
    Attached,
    /// One of the node's known addresses is in the same network (IPv4 /24, IPv6 /64).
    SameNetwork(IpNet),
}

impl fmt::Display for CandidateWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CandidateWhy::Claimed(p) => write!(f, "claims it by {p}, as another node does"),
            CandidateWhy::Attached => f.write_str("has the volume attached"),
            CandidateWhy::SameNetwork(n) => write!(f, "has an address in {n}"),
        }
    }
}

/// A node that may own an unattributed address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The node.
    pub node: String,
    /// Why.
    pub why: CandidateWhy,
}

/// Who an address belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attribution {
    /// Tied to a node.
    Tied(Tie),
    /// No proof ties it; the nodes that may own it (none known: empty).
    Unattributed {
        /// Candidates, claimants first, each node once.
        candidates: Vec<Candidate>,
    },
}

impl Attribution {
    /// The tie, when there is one.
    pub fn tie(&self) -> Option<&Tie> {
        match self {
            Attribution::Tied(t) => Some(t),
            Attribution::Unattributed { .. } => None,
        }
    }

    /// `node <n> by <proof>`, or `unattributed (candidates: a (why), b (why))` /
    /// `unattributed (no candidate)`.
    pub fn text(&self) -> String {
        match self {
            Attribution::Tied(t) => t.to_string(),
            Attribution::Unattributed { candidates } if candidates.is_empty() => {
                "unattributed (no candidate)".to_string()
            }
            Attribution::Unattributed { candidates } => {
                let c: Vec<String> = candidates.iter().map(|c| format!("{} ({})", c.node, c.why)).collect();
                format!("unattributed (candidates: {})", c.join(", "))
            }
        }
    }
}

/// The claims of one proof: address → (node, proof) for each claimant.
type Claims = HashMap<IpAddr, Vec<(String, Proof)>>;

/// Every address→node claim of one snapshot, by proof. Building costs one pass over the nodes,
/// the pods, the images' metadata and the probes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressBook {
    node_addrs: Claims,
    meta: Claims,
    pods: Claims,
    probe: Claims,
    /// (network, node, CSIAddonsNode `namespace/name`) of every fence client.
    fence_clients: Vec<(IpNet, String, String)>,
    rules: Vec<(IpNet, String)>,
    annotated: Vec<(IpNet, String, String)>,
}

fn claim(map: &mut Claims, ip: IpAddr, node: &str, proof: Proof) {
    let v = map.entry(ip.to_canonical()).or_default();
    if !v.iter().any(|(n, _)| n == node) {
        v.push((node.to_string(), proof));
    }
}

/// IPs or CIDRs separated by commas or white space (an annotation's value); others skipped.
fn nets_of(value: &str) -> Vec<IpNet> {
    value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter_map(|t| t.parse::<IpNet>().ok().or_else(|| t.parse::<IpAddr>().ok().map(IpNet::from)))
        .collect()
}

impl AddressBook {
    /// Reads `snap` (nodes, pods, `ceph.image_meta`, `csiaddons_nodes`, `probe_addresses`) and `cfg`'s rules and
    /// annotation key. A rule that does not parse is skipped (the config's validation refuses it).
    pub fn build(snap: &Snapshot, cfg: &DiagnoseConfig) -> AddressBook {
        let mut b = AddressBook { rules: cfg.parsed_address_rules().unwrap_or_default(), ..AddressBook::default() };
        let key = cfg.node_address_annotation.trim();
        for n in &snap.nodes {
            let name = n.metadata.name.as_deref().unwrap_or_default();
            for (ip, kind) in node_addresses(n) {
                claim(&mut b.node_addrs, ip, name, Proof::NodeAddress { kind: kind.to_string() });
            }
            let value = n.metadata.annotations.as_ref().and_then(|a| a.get(key)).filter(|_| !key.is_empty());
            for net in value.map(|v| nets_of(v)).unwrap_or_default() {
                b.annotated.push((net, name.to_string(), key.to_string()));
            }
        }
        for m in snap.ceph.image_meta.values().filter_map(|m| m.value.as_ref().ok()) {
            for c in client_addresses(m) {
                claim(&mut b.meta, c.ip, &c.node, Proof::ImageMeta { key: c.key });
            }
        }
        for n in snap.csiaddons_nodes.iter().flatten().filter(|n| !n.node_id.is_empty()) {
            for net in n.nets() {
                b.fence_clients.push((net, n.node_id.clone(), n.key()));
            }
        }
        for p in snap.pods.iter().filter(|p| is_ceph_client_pod(p) && p.metadata.deletion_timestamp.is_none()) {
            let Some(node) = pod_node(p) else { continue };
            for ip in pod_ips(p) {
                claim(&mut b.pods, ip, node, Proof::ClientPod { pod: key_of(&p.metadata) });
            }
        }
        for (node, ips) in &snap.probe_addresses {
            for ip in ips {
                claim(&mut b.probe, *ip, node, Proof::Probe);
            }
        }
        b
    }

    /// Who `ip` belongs to, by the first proof that ties it to exactly one node; `attached` are
    /// the nodes the image in question is attached to (candidates when nothing ties it).
    pub fn attribute_ip(&self, ip: IpAddr, attached: &[String]) -> Attribution {
        let ip = ip.to_canonical();
        let mut candidates: Vec<Candidate> = vec![];
        let rules: Vec<(String, Proof)> = self
            .rules
            .iter()
            .filter(|(n, _)| n.contains(&ip))
            .map(|(n, node)| (node.clone(), Proof::Rule { net: *n }))
            .collect();
        let annotated: Vec<(String, Proof)> = self
            .annotated
            .iter()
            .filter(|(n, ..)| n.contains(&ip))
            .map(|(_, node, key)| (node.clone(), Proof::Annotation { key: key.clone() }))
            .collect();
        let mut fenced: Vec<(String, Proof)> = vec![];
        for (net, node, object) in self.fence_clients.iter().filter(|(n, ..)| n.contains(&ip)) {
            if !fenced.iter().any(|(n, _)| n == node) {
                fenced.push((node.clone(), Proof::FenceClient { object: object.clone(), net: *net }));
            }
        }
        let [addrs, meta, pods, probe] =
            [&self.node_addrs, &self.meta, &self.pods, &self.probe].map(|m| m.get(&ip).cloned().unwrap_or_default());
        for claims in [addrs, meta, fenced, pods, probe, rules, annotated] {
            match claims.as_slice() {
                [] => {}
                [(node, proof)] => return Attribution::Tied(Tie { node: node.clone(), proof: proof.clone() }),
                many => candidates.extend(
                    many.iter().map(|(n, p)| Candidate { node: n.clone(), why: CandidateWhy::Claimed(p.clone()) }),
                ),
            }
        }
        candidates.extend(attached.iter().map(|n| Candidate { node: n.clone(), why: CandidateWhy::Attached }));
        let net = same_network(ip);
        let mut near: Vec<&str> = [&self.node_addrs, &self.pods, &self.probe]
            .iter()
            .flat_map(|m| m.iter())
            .filter(|(a, _)| net.contains(*a))
            .flat_map(|(_, v)| v.iter().map(|(n, _)| n.as_str()))
            .collect();
        near.sort_unstable();
        candidates
            .extend(near.into_iter().map(|n| Candidate { node: n.to_string(), why: CandidateWhy::SameNetwork(net) }));
        let mut seen = std::collections::HashSet::new();
        candidates.retain(|c| seen.insert(c.node.clone()));
        Attribution::Unattributed { candidates }
    }

    /// [`AddressBook::attribute_ip`] of a Ceph address (`IP:port/nonce`, a bare IP, an address
    /// vector: its first address any proof ties, else its first address); `None` when `addr` is
    /// no address.
    pub fn attribute(&self, addr: &str, attached: &[String]) -> Option<Attribution> {
        let ips = ips_of(addr);
        let first = *ips.first()?;
        let tied = ips.iter().map(|ip| self.attribute_ip(*ip, &[])).find(|a| a.tie().is_some());
        Some(tied.unwrap_or_else(|| self.attribute_ip(first, attached)))
    }
}

/// The nodes `vol` is attached to: its VolumeAttachments' nodes, its `volumesAttached` and
/// `volumesInUse` nodes, sorted, each once (the candidates of its unattributed clients).
pub fn volume_nodes(vol: &VolumeLineage) -> Vec<String> {
    let mut v: Vec<String> = vol.attachments.iter().map(|a| a.node.clone()).collect();
    v.extend(vol.attached_on.iter().chain(&vol.in_use_on).cloned());
    v.sort();
    v.dedup();
    v
}

/// The IPs of a Ceph address: a bare IP, `IP:port/nonce`, or each of an address vector's.
pub fn ips_of(addr: &str) -> Vec<IpAddr> {
    match addr.trim().parse::<IpAddr>() {
        Ok(ip) => vec![ip.to_canonical()],
        Err(_) => EntityAddr::parse_all(addr).iter().map(|a| a.ip).collect(),
    }
}

/// The /24 (IPv4) or /64 (IPv6) around `ip`.
fn same_network(ip: IpAddr) -> IpNet {
    let len = if ip.is_ipv4() { 24 } else { 64 };
    IpNet::new(ip, len).map(|n| n.trunc()).unwrap_or_else(|_| IpNet::from(ip))
}

/// Attribution over one snapshot for the rules and the panes: the lineage's node addresses first
/// (O(1) per address), the [`AddressBook`] built only when an address is not a node's.
pub struct Attributor<'a> {
    snap: &'a Snapshot,
    lin: &'a Lineage,
    cfg: &'a DiagnoseConfig,
    book: OnceLock<AddressBook>,
}

impl<'a> Attributor<'a> {
    /// Attribution over `snap` (whose lineage is `lin`) with `cfg`'s rules.
    pub fn new(snap: &'a Snapshot, lin: &'a Lineage, cfg: &'a DiagnoseConfig) -> Self {
        Attributor { snap, lin, cfg, book: OnceLock::new() }
    }

    /// The claims of every proof (built on first use).
    pub fn book(&self) -> &AddressBook {
        self.book.get_or_init(|| AddressBook::build(self.snap, self.cfg))
    }

    /// Who the Ceph address `addr` belongs to (see [`AddressBook::attribute`]); two nodes sharing
    /// a node address give the lineage's one ([`Lineage::node_for_ip`]). `None` for no address.
    pub fn attribute(&self, addr: &str, attached: &[String]) -> Option<Attribution> {
        for ip in ips_of(addr) {
            if let Some(node) = self.lin.node_for_ip(ip) {
                let kind = self.kind_of(node, ip).unwrap_or("InternalIP").to_string();
                return Some(Attribution::Tied(Tie { node: node.to_string(), proof: Proof::NodeAddress { kind } }));
            }
        }
        self.book().attribute(addr, attached)
    }

    /// The node `addr` is tied to, if any.
    pub fn tie(&self, addr: &str) -> Option<Tie> {
        match self.attribute(addr, &[])? {
            Attribution::Tied(t) => Some(t),
            Attribution::Unattributed { .. } => None,
        }
    }

    fn kind_of(&self, node: &str, ip: IpAddr) -> Option<&'a str> {
        let n = self.snap.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(node))?;
        node_addresses(n).into_iter().find(|(a, _)| *a == ip).map(|(_, k)| k)
    }
}

#[cfg(test)]
#[path = "attribution_tests.rs"]
mod tests;
