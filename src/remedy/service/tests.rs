use super::*;
use crate::remedy::safety::SafetyError;

#[test]
fn safety_refusals_offer_the_typed_override() {
    let e = RunError::Safety(SafetyError::ReadyNode { node: "n1".into() });
    assert_eq!(override_need(&e), Some(OverrideNeed::ReadyNode("n1".into())));
    let e = RunError::Safety(SafetyError::WideBlocklist { addr: "10.0.0.9:0/0".into(), ip: "10.0.0.9".into() });
    assert_eq!(override_need(&e).as_ref().map(OverrideNeed::name), Some("10.0.0.9:0/0"));
    assert_eq!(override_need(&RunError::BackupFirst), None);
}
