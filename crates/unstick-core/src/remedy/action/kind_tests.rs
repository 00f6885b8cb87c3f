use super::*;
use crate::model::ImageRef;
use crate::remedy::action::kind::WRITE_ACTION_KINDS;

#[test]
fn the_kind_is_the_journal_tag() {
    let image = ImageRef { pool: "p".into(), namespace: String::new(), image: "i".into() };
    let s = String::new;
    let all = [
        WriteAction::RbdLockRm { image: image.clone(), lock_id: s(), locker: s(), address: s() },
        WriteAction::BlocklistAdd { addr: s() },
        WriteAction::BlocklistRm { addr: s() },
        WriteAction::BlocklistRangeRm { range: s() },
        WriteAction::TaintOutOfService { node: s() },
        WriteAction::UntaintOutOfService { node: s() },
        WriteAction::DeletePod { namespace: "ns".into(), name: s(), uid: s() },
        WriteAction::ForceDeletePod { namespace: "ns".into(), name: s(), uid: s() },
        WriteAction::DeleteVolumeAttachment { name: s(), node: s() },
        WriteAction::RemoveVaFinalizer { name: s(), finalizer: s() },
        WriteAction::ReleaseVolumeInUse { node: s(), volume: s() },
        WriteAction::SetMountPropagation {
            namespace: "ns".into(),
            daemonset: s(),
            container: s(),
            mount_path: s(),
            from: None,
            to: None,
        },
        WriteAction::NetworkFenceCreate { name: s(), node: s(), cidrs: vec![], class: s() },
        WriteAction::NetworkFenceState { name: s(), from: s(), to: s() },
        WriteAction::SnapCreate { image, snap: s() },
    ];
    let kinds: Vec<&str> = all.iter().map(WriteAction::kind).collect();
    assert_eq!(kinds, WRITE_ACTION_KINDS);
    for a in &all {
        let json = serde_json::to_value(a).unwrap();
        assert_eq!(json["kind"], a.kind(), "{a:?}");
        assert_eq!(a.namespace(), json["namespace"].as_str(), "{a:?}");
    }
}
