use super::*;
use crate::remedy::safety::SafetyError;

fn t(s: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + s).unwrap()
}

#[test]
fn refusals_are_classified_from_the_safety_rules_own_words() {
    let ready = SafetyError::ReadyNode { node: "n1".into() }.to_string();
    let wide = SafetyError::WideBlocklist { addr: "10.0.0.5:0/0".into(), ip: "10.0.0.5".into() }.to_string();
    let live = SafetyError::LiveWatcher { addr: "10.0.0.5:0/1".into(), node: "n1".into() }.to_string();
    let has = SafetyError::HasWatchers("10.0.0.5:0/1".into()).to_string();
    assert_eq!(risk_kind(&ready), Some("ready-node"));
    assert_eq!(risk_kind(&wide), Some("wide-blocklist"));
    assert_eq!(risk_kind(&live), Some("live-watcher"));
    assert_eq!(risk_kind(&has), Some("has-watchers"));
    assert_eq!(risk_kind("state changed since the finding; nothing was done"), Some("state-changed"));
    assert_eq!(risk_kind("HTTP 500 from the API server"), None);
}

fn seen(kind: &str, state: StepState, at: i64) -> StepSeen {
    StepSeen { id: format!("inc/x/{kind}"), kind: kind.into(), title: format!("{kind} step"), state, at: t(at) }
}

#[test]
fn debrief_marks_reference_steps_skips_and_risks() {
    let s = Scenario::embedded("stale-lock").unwrap().unwrap();
    let d = debrief(Input {
        scenario: &s,
        started: t(0),
        finished: t(125),
        sim_seconds: 625,
        hints_unlocked: 2,
        journals: vec![],
        seen: vec![
            seen("Backup", StepState::Done("ok".into()), 30),
            seen("Check", StepState::Skipped("in a hurry".into()), 40),
        ],
        refused: vec![(t(50), SafetyError::ReadyNode { node: "node1".into() }.to_string()), (t(60), "HTTP 500".into())],
    });
    assert_eq!(d.seconds, 125);
    assert_eq!(d.reference[0].done_after, Some(30), "Backup done 30 s in");
    assert_eq!(d.reference[1].done_after, None, "the Check was skipped");
    assert!(d.skipped.iter().any(|x| x.contains("skipped — in a hurry")));
    assert!(d.skipped.iter().any(|x| x.contains("Verify") && x.contains("never done")));
    assert_eq!(d.risky.len(), 1, "only the safety refusal is a risky attempt");
    assert!(d.risky[0].consequence.contains("node1 is Ready"), "the scenario's own words: {:?}", d.risky[0]);
    assert_eq!(d.risky[0].after, 50);
    let text = d.lines().join("\n");
    assert!(text.contains("solved in 2:05 (simulated 10:25); hints unlocked 2/3"), "{text}");
    assert!(text.contains("NOT DONE") && text.contains("not needed"), "required vs optional steps: {text}");
    assert!(text.contains("Risky actions attempted (1)"), "{text}");
}

#[test]
fn a_verify_step_still_pending_in_the_playbook_is_pending_not_missed() {
    let s = Scenario::embedded("stale-lock").unwrap().unwrap();
    let d = debrief(Input {
        scenario: &s,
        started: t(0),
        finished: t(60),
        sim_seconds: 300,
        hints_unlocked: 0,
        journals: vec![],
        seen: vec![seen("Backup", StepState::Done("ok".into()), 10), seen("Verify", StepState::Pending, 20)],
        refused: vec![],
    });
    let v = d.reference.iter().find(|r| r.kind == "Verify").expect("a Verify reference step");
    assert!(v.pending && v.done_after.is_none());
    assert!(!d.skipped.iter().any(|x| x.contains("Verify")), "{:?}", d.skipped);
    let text = d.lines().join("\n");
    assert!(text.contains("pending"), "{text}");
}
