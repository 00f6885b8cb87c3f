use super::*;
use crate::model::remediation::Remediation;

fn facts() -> RemediationFacts {
    RemediationFacts {
        signs: vec![Remediation {
            node: "dead".into(),
            by: "SelfNodeRemediation medik8s/dead".into(),
            state: "phase Fencing-Completed".into(),
        }],
        unread: vec![],
    }
}

#[test]
fn a_node_under_remediation_is_refused_until_its_name_is_typed() {
    let mut w = vec![];
    let e = gate(&["live".into(), "dead".into()], &facts(), None, &mut w).unwrap_err();
    assert_eq!(e.node, "dead");
    assert_eq!(
        e.by,
        "automatic remediation acts on node dead: SelfNodeRemediation medik8s/dead (phase Fencing-Completed)"
    );
    assert!(gate(&["dead".into()], &facts(), Some("live"), &mut w).is_err(), "another node's name does not lift it");
    gate(&["dead".into()], &facts(), Some("dead"), &mut w).unwrap();
    assert_eq!(
        w,
        [
            "OVERRIDE: automatic remediation acts on node dead: SelfNodeRemediation medik8s/dead (phase Fencing-Completed); acting anyway races it"
        ]
    );
}

#[test]
fn untouched_nodes_pass_and_unreadable_kinds_are_warned_about() {
    let mut w = vec![];
    gate(&["live".into()], &facts(), None, &mut w).unwrap();
    assert!(w.is_empty());
    let f = RemediationFacts { unread: vec!["listing selfnoderemediations: 403".into()], ..facts() };
    gate(&["live".into()], &f, None, &mut w).unwrap();
    assert_eq!(w, ["remediators not read (listing selfnoderemediations: 403): whether one acts on live is unknown"]);
    gate(&[], &f, None, &mut w).unwrap();
    assert_eq!(w.len(), 1, "an action on no node says nothing");
}
