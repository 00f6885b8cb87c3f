//! Reads the Medik8s remediators' objects ([`crate::model::remediation`]): one list per kind,
//! all namespaces. A list answered 404 (the CRD does not exist: no such resource) means that
//! remediator is not installed, told by the status code, never by the message; any other failure
//! leaves the kind unreadable with why (the findings then cannot say it does not act).

use std::time::Duration;

use kube::api::{ApiResource, GroupVersionKind};

use crate::model::remediation::{RemediatorKind, Remediators, from_object};
use crate::sources::kube::optional_kind::{ListFailure, list_json};

/// Why one kind could not be listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemediatorReadError {
    /// The list failed (not a 404): the client's message.
    #[error("listing {0}: {1}")]
    Api(&'static str, String),
    /// No answer within the timeout.
    #[error("listing {0}: timed out after {1} s")]
    Timeout(&'static str, u64),
}

/// Lists one kind: `Ok(None)` on 404 (not installed), else its objects as JSON.
pub async fn list_kind(
    client: &kube::Client,
    kind: RemediatorKind,
    timeout: Duration,
) -> Result<Option<Vec<serde_json::Value>>, RemediatorReadError> {
    let gvk = GroupVersionKind::gvk(kind.group(), kind.version(), kind.kind());
    let ar = ApiResource::from_gvk_with_plural(&gvk, kind.plural());
    list_json(client, &ar, timeout).await.map_err(|f| match f {
        ListFailure::Api(m) => RemediatorReadError::Api(kind.plural(), m),
        ListFailure::Timeout(s) => RemediatorReadError::Timeout(kind.plural(), s),
    })
}

/// Lists every kind ([`RemediatorKind::ALL`], concurrently) and reads their remediations.
pub async fn list(client: &kube::Client, timeout: Duration) -> Remediators {
    let [a, b, c] = RemediatorKind::ALL;
    let (ra, rb, rc) =
        tokio::join!(list_kind(client, a, timeout), list_kind(client, b, timeout), list_kind(client, c, timeout));
    let mut out = Remediators::default();
    for (kind, r) in [(a, ra), (b, rb), (c, rc)] {
        match r {
            Ok(None) => out.absent.push(kind),
            Ok(Some(objs)) => out.objects.extend(objs.iter().flat_map(|o| from_object(kind, o))),
            Err(e) => out.unreadable.push((kind, e.to_string())),
        }
    }
    out.objects.sort();
    out
}
