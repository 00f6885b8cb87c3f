//! Reads csi-addons NetworkFences ([`crate::model::fence`]) when csi-addons is installed: a list
//! answered 404 (the CRD does not exist: no such resource) means not installed, told by the
//! status code, never by the message.

use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};

use crate::model::fence::{GROUP, NetworkFence, NetworkFences, PLURAL, VERSION};

/// Why the NetworkFences could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenceReadError {
    /// The list failed (not a 404): the client's message.
    #[error("listing {PLURAL}.{GROUP}: {0}")]
    Api(String),
    /// No answer within the timeout.
    #[error("listing {PLURAL}.{GROUP}: timed out after {0} s")]
    Timeout(u64),
}

/// Lists every NetworkFence: `Ok(None)` when the API server answers 404 (csi-addons not
/// installed), `Ok(Some(..))` otherwise (objects that do not parse are skipped).
pub async fn list(client: &kube::Client, timeout: Duration) -> Result<NetworkFences, FenceReadError> {
    let gvk = GroupVersionKind::gvk(GROUP, VERSION, "NetworkFence");
    let ar = ApiResource::from_gvk_with_plural(&gvk, PLURAL);
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    match tokio::time::timeout(timeout, api.list(&ListParams::default())).await {
        Err(_) => Err(FenceReadError::Timeout(timeout.as_secs())),
        Ok(Err(kube::Error::Api(s))) if s.code == 404 => Ok(None),
        Ok(Err(e)) => Err(FenceReadError::Api(e.to_string())),
        Ok(Ok(l)) => Ok(Some(
            l.items
                .into_iter()
                .filter_map(|o| serde_json::to_value(o).ok().and_then(|v| NetworkFence::from_json(v).ok()))
                .collect(),
        )),
    }
}
