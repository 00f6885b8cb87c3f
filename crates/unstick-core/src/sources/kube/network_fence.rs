//! Reads csi-addons NetworkFences and NetworkFenceClasses ([`crate::model::fence`]) and
//! CSIAddonsNodes ([`crate::model::csiaddons_node`]) when
//! csi-addons is installed: a list answered 404 (the CRD does not exist: no such resource) means
//! not installed, told by the status code, never by the message.

use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};

use crate::model::csiaddons_node::{self, CsiAddonsNode, CsiAddonsNodes};
use crate::model::fence::{CLASS_PLURAL, GROUP, NetworkFence, NetworkFenceClass, NetworkFences, PLURAL, VERSION};
use crate::sources::kube::optional_kind::{self, ListFailure};

/// Why the NetworkFences (or their classes) could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenceReadError {
    /// The list failed (not a 404): the resource and the client's message.
    #[error("listing {0}.{GROUP}: {1}")]
    Api(&'static str, String),
    /// No answer within the timeout.
    #[error("listing {0}.{GROUP}: timed out after {1} s")]
    Timeout(&'static str, u64),
}

/// The dynamic API of `plural` (`kind`) in the csi-addons group, cluster-scoped.
pub fn api(client: &kube::Client, kind: &str, plural: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(GROUP, VERSION, kind);
    Api::all_with(client.clone(), &ApiResource::from_gvk_with_plural(&gvk, plural))
}

/// Every object of `plural` as JSON: `Ok(None)` on a 404 (the CRD is not installed).
async fn list_json(
    client: &kube::Client,
    kind: &str,
    plural: &'static str,
    timeout: Duration,
) -> Result<Option<Vec<serde_json::Value>>, FenceReadError> {
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, kind), plural);
    optional_kind::list_json(client, &ar, timeout).await.map_err(|f| match f {
        ListFailure::Api(m) => FenceReadError::Api(plural, m),
        ListFailure::Timeout(s) => FenceReadError::Timeout(plural, s),
    })
}

/// Lists every NetworkFence: `Ok(None)` when the API server answers 404 (csi-addons not
/// installed), `Ok(Some(..))` otherwise (objects that do not parse are skipped).
pub async fn list(client: &kube::Client, timeout: Duration) -> Result<NetworkFences, FenceReadError> {
    let items = list_json(client, "NetworkFence", PLURAL, timeout).await?;
    Ok(items.map(|v| v.into_iter().filter_map(|o| NetworkFence::from_json(o).ok()).collect()))
}

/// Lists every NetworkFenceClass: empty when the CRD is not installed (404).
pub async fn list_classes(client: &kube::Client, timeout: Duration) -> Result<Vec<NetworkFenceClass>, FenceReadError> {
    let items = list_json(client, "NetworkFenceClass", CLASS_PLURAL, timeout).await?;
    Ok(items.unwrap_or_default().into_iter().filter_map(|o| NetworkFenceClass::from_json(o).ok()).collect())
}

/// Lists every CSIAddonsNode (all namespaces): `Ok(None)` when the CRD is not installed (404);
/// objects that do not parse are skipped.
pub async fn list_nodes(client: &kube::Client, timeout: Duration) -> Result<CsiAddonsNodes, FenceReadError> {
    let items = list_json(client, csiaddons_node::KIND, csiaddons_node::PLURAL, timeout).await?;
    Ok(items.map(|v| v.into_iter().filter_map(|o| CsiAddonsNode::from_json(o).ok()).collect()))
}

/// What csi-addons says about fencing: its NetworkFences, NetworkFenceClasses and CSIAddonsNodes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsiAddons {
    /// The NetworkFences; `None` when csi-addons is not installed.
    pub fences: NetworkFences,
    /// The NetworkFenceClasses (empty when not installed).
    pub classes: Vec<NetworkFenceClass>,
    /// The CSIAddonsNodes; `None` when their CRD is not installed.
    pub nodes: CsiAddonsNodes,
}

impl CsiAddons {
    /// Puts them into `snap` (`network_fences`, `network_fence_classes`, `csiaddons_nodes`).
    pub fn apply(self, snap: &mut crate::model::Snapshot) {
        (snap.network_fences, snap.network_fence_classes, snap.csiaddons_nodes) =
            (self.fences, self.classes, self.nodes);
    }
}

/// The fences, the classes and the CSIAddonsNodes, read concurrently: all empty (`None`, `[]`,
/// `None`) when csi-addons is not installed. Errors: the first list that failed (not a 404).
pub async fn read_all(client: &kube::Client, timeout: Duration) -> Result<CsiAddons, FenceReadError> {
    let (f, c, n) = tokio::join!(list(client, timeout), list_classes(client, timeout), list_nodes(client, timeout));
    let (fences, nodes) = (f?, n?);
    let classes = if fences.is_some() { c? } else { vec![] };
    Ok(CsiAddons { fences, classes, nodes })
}
