//! [`plan`](super::resolve::plan) for the csi-addons NetworkFence actions: a read of the fence
//! just before, then a create, a state patch guarded by `resourceVersion` and the state before,
//! or nothing when the change is already in effect.

use kube::api::DynamicObject;
use serde_json::{Value, json};

use super::WriteAction;
use super::resolve::{ApiTarget, PlanError, Planned, read_err, rv_test};
use crate::model::fence::{self, FENCED, NetworkFence};
use crate::remedy::action::precheck::{PrecheckError, ReadFailure, Reader};
use crate::sources::kube::network_fence::{FenceReadError, api, list};

/// The NetworkFence `name` as served (`None`: there is none). Errors: the read.
async fn read(k: &kube::Client, name: &str) -> Result<Option<(NetworkFence, Option<String>)>, PlanError> {
    let o: Option<DynamicObject> = api(k, fence::KIND, fence::PLURAL).get_opt(name).await.map_err(read_err)?;
    let Some(o) = o else { return Ok(None) };
    let rv = o.metadata.resource_version.clone();
    let v = serde_json::to_value(o).map_err(|e| PlanError(None, format!("NetworkFence {name}: {e}")))?;
    let f = NetworkFence::from_json(v).map_err(|e| PlanError(None, format!("NetworkFence {name}: {e}")))?;
    Ok(Some((f, rv)))
}

/// The state patch: `resourceVersion` and the state before tested, then replaced.
fn state_patch(name: &str, rv: &Option<String>, from: &str, to: &str) -> Planned {
    let ops: Vec<Value> = vec![
        rv_test(rv),
        json!({"op": "test", "path": "/spec/fenceState", "value": from}),
        json!({"op": "replace", "path": "/spec/fenceState", "value": to}),
    ];
    Planned::Patch { target: ApiTarget::NetworkFence(name.to_string()), ops }
}

/// Plans a [`WriteAction::NetworkFenceCreate`] or [`WriteAction::NetworkFenceState`]. Errors:
/// the read failed; a fence of that name exists with other CIDRs or class (never taken over);
/// the fence to change is gone or in a third state.
pub(crate) async fn plan_fence(k: &kube::Client, action: &WriteAction) -> Result<Planned, PlanError> {
    match action {
        WriteAction::NetworkFenceCreate { name, cidrs, class, .. } => match read(k, name).await? {
            None => Ok(Planned::Create {
                target: ApiTarget::NetworkFence(name.clone()),
                body: fence::manifest(name, class, cidrs),
            }),
            Some((f, rv)) if f.cidrs == *cidrs && f.class == *class => {
                if f.is_fenced() {
                    Ok(Planned::Nothing(format!("NetworkFence {name} already fences {}", cidrs.join(", "))))
                } else {
                    Ok(state_patch(name, &rv, &f.fence_state, FENCED))
                }
            }
            Some((f, _)) => Err(PlanError(
                Some(409),
                format!(
                    "NetworkFence {name} exists with other spec (cidrs {}, class {:?}); nothing sent",
                    f.cidrs.join(", "),
                    f.class
                ),
            )),
        },
        WriteAction::NetworkFenceState { name, from, to } => {
            let Some((f, rv)) = read(k, name).await? else {
                return Err(PlanError(Some(404), format!("NetworkFence {name} not found; nothing sent")));
            };
            if f.fence_state == *to {
                return Ok(Planned::Nothing(format!("NetworkFence {name} is already {to}")));
            }
            if f.fence_state != *from {
                return Err(PlanError(
                    None,
                    format!("NetworkFence {name} is {:?}, not {from}; nothing sent", f.fence_state),
                ));
            }
            Ok(state_patch(name, &rv, from, to))
        }
        other => Err(PlanError(None, format!("not a NetworkFence action: {}", other.summary()))),
    }
}

/// Every NetworkFence, read for a re-check (`None`: csi-addons is not installed), bounded by the
/// reader's API timeout. Errors: [`PrecheckError::Read`].
pub(crate) async fn live_fences(r: &Reader) -> Result<Option<Vec<NetworkFence>>, PrecheckError> {
    let failed = |e: FenceReadError| {
        let error = match e {
            FenceReadError::Timeout(_, secs) => ReadFailure::Timeout { secs },
            other => ReadFailure::Api(other.to_string()),
        };
        PrecheckError::Read { what: "networkfences".into(), error }
    };
    list(&r.kube, r.api_timeout).await.map_err(failed)
}
