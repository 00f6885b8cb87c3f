//! The safety rules of fencing through csi-addons (NetworkFences), for the safety module's
//! `approve`: which addresses may go into a NetworkFence, which nodes a fence covers, and that a
//! fence's own blocklist entries are not removed by hand.

use std::net::IpAddr;

use crate::attribution::{Attribution, Proof};
use crate::model::ceph::{BlocklistEntry, BlocklistTarget};
use crate::model::fence::owner_of;
use crate::remedy::action::WriteAction;
use crate::remedy::action::precheck::{LiveState, NodeFact};
use crate::remedy::action::safety_error::SafetyError;

/// Who an address belongs to on the live state (the safety module's `owners`).
pub(crate) type Owners<'a> = Result<Vec<(&'a NodeFact, Option<Proof>)>, Attribution>;

/// Every CIDR of node `node`'s NetworkFence must be one address (`IP/32`, `IP/128`), not
/// loopback, that `owners` (the safety module's, on the live state) ties to `node` alone; a tie
/// by a proof other than the node's own addresses is said in `warnings`. Errors: [`SafetyError::FenceCidr`] (no override exists).
pub(crate) fn proven_cidrs<'a>(
    node: &str,
    cidrs: &[String],
    owners: impl Fn(IpAddr) -> Owners<'a>,
    warnings: &mut Vec<String>,
) -> Result<(), SafetyError> {
    let refuse = |cidr: &str, why: String| SafetyError::FenceCidr { cidr: cidr.into(), node: node.into(), why };
    if cidrs.is_empty() {
        return Err(refuse("(none)", "a NetworkFence needs at least one CIDR".into()));
    }
    for cidr in cidrs {
        let net: ipnet::IpNet = cidr.parse().map_err(|_| refuse(cidr, "not a CIDR".into()))?;
        if net.prefix_len() != net.max_prefix_len() {
            return Err(refuse(cidr, "not a single address (IP/32 or IP/128): it could fence other hosts".into()));
        }
        let ip = net.addr();
        if ip.is_loopback() {
            return Err(refuse(cidr, "a loopback address is this console's own host".into()));
        }
        let tied = owners(ip).map_err(|a| refuse(cidr, format!("no proof ties it to a node ({})", a.text())))?;
        if tied.is_empty() {
            return Err(refuse(cidr, "the node it is tied to is not in the live state".into()));
        }
        for (n, proof) in tied {
            if n.name != node {
                return Err(refuse(cidr, format!("it is node {}'s", n.name)));
            }
            if let Some(p) = proof {
                warnings.push(format!("{ip} is node {node}'s by {p}"));
            }
        }
    }
    Ok(())
}

/// The nodes with an address inside the CIDRs of NetworkFence `name`, or whose CSIAddonsNode
/// lists a fence client inside them (a storage or pod address that is not among the node's
/// `status.addresses`); none when the fence is not in the live state.
pub(crate) fn nodes_of_fence<'a>(name: &str, live: &'a LiveState) -> Vec<&'a NodeFact> {
    let Some(f) = live.fences.as_deref().unwrap_or_default().iter().find(|f| f.name == name) else { return vec![] };
    let nets = f.nets();
    let inside = |c: &ipnet::IpNet| nets.iter().any(|net| net.contains(c));
    let by_client: Vec<&str> = live
        .csiaddons_nodes
        .iter()
        .flatten()
        .filter(|c| c.nets().iter().any(inside))
        .map(|c| c.node_id.as_str())
        .collect();
    live.nodes
        .iter()
        .filter(|n| {
            by_client.contains(&n.name.as_str())
                || n.ips.iter().any(|ip| nets.iter().any(|net| net.contains(&ip.to_canonical())))
        })
        .collect()
}

/// A blocklist removal of an entry a `Fenced` NetworkFence owns is refused. Errors:
/// [`SafetyError::FenceOwned`].
pub(crate) fn not_fence_owned(action: &WriteAction, live: &LiveState) -> Result<(), SafetyError> {
    let target = match action {
        WriteAction::BlocklistRm { addr } => BlocklistTarget::Addr(addr.clone()),
        WriteAction::BlocklistRangeRm { range } => BlocklistTarget::Range(range.clone()),
        _ => return Ok(()),
    };
    let entry = BlocklistEntry { target, until: None };
    match owner_of(live.fences.as_deref().unwrap_or_default(), &entry) {
        Some(f) => Err(SafetyError::FenceOwned { entry: entry.text().to_string(), fence: f.name.clone() }),
        None => Ok(()),
    }
}
