//! Not racing a remediator: an action that touches a node on which Medik8s remediation acts
//! ([`crate::model::remediation`], read live with the re-check) is refused until the operator
//! types the node's name; a remediator deletes the node's pods and VolumeAttachments, fences or
//! reboots the node, and sets and later removes the out-of-service taint on its own, so a second
//! actor on the same node undoes or doubles its work. Kinds that could not be read are said in
//! the confirmation's warnings (whether they act is unknown). The safety rules
//! ([`crate::remedy::action::safety`]) call [`gate`] with the nodes an action touches.

use crate::model::remediation::{RemediationFacts, describe};

/// A remediator acts on `node`, and its name was not typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Racing {
    /// The node.
    pub node: String,
    /// What acts there ([`describe`]).
    pub by: String,
}

/// Checks the `nodes` an action touches against `facts`: the first node a remediator acts on
/// whose name is not `typed` is [`Racing`]; a typed one adds an `OVERRIDE:` warning saying what
/// acts there. Unreadable remediator kinds add a warning each.
pub fn gate(
    nodes: &[String],
    facts: &RemediationFacts,
    typed: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<(), Racing> {
    for node in nodes {
        let signs = facts.on(node);
        if signs.is_empty() {
            continue;
        }
        let by = describe(node, &signs);
        if typed != Some(node.as_str()) {
            return Err(Racing { node: node.clone(), by });
        }
        warnings.push(format!("OVERRIDE: {by}; acting anyway races it"));
    }
    if !nodes.is_empty() {
        for why in &facts.unread {
            warnings.push(format!("remediators not read ({why}): whether one acts on {} is unknown", nodes.join(", ")));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "remediating_tests.rs"]
mod tests;
