//! Lists of a kind whose CRD may not exist (csi-addons, Medik8s): a 404 (no such resource) means
//! not installed, told by the status code, never by the message.

use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, ListParams};

/// Why a list failed; the caller names the kind in its own error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListFailure {
    /// The list failed (not a 404): the client's message.
    Api(String),
    /// No answer within the timeout, seconds.
    Timeout(u64),
}

/// Every object of `resource` in all namespaces as JSON, within `timeout`: `Ok(None)` on a 404
/// (the CRD is not installed).
pub async fn list_json(
    client: &kube::Client,
    resource: &ApiResource,
    timeout: Duration,
) -> Result<Option<Vec<serde_json::Value>>, ListFailure> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), resource);
    match tokio::time::timeout(timeout, api.list(&ListParams::default())).await {
        Err(_) => Err(ListFailure::Timeout(timeout.as_secs())),
        Ok(Err(kube::Error::Api(s))) if s.code == 404 => Ok(None),
        Ok(Err(e)) => Err(ListFailure::Api(e.to_string())),
        Ok(Ok(l)) => Ok(Some(l.items.into_iter().filter_map(|o| serde_json::to_value(o).ok()).collect())),
    }
}
