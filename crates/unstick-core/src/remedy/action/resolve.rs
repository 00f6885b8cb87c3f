//! The exact Kubernetes request of an API [`WriteAction`], resolved from a read of the object just
//! before: the `resourceVersion` tested, the list index patched (`/metadata/finalizers/1`), the
//! UID and `resourceVersion` of a delete's preconditions. [`crate::remedy::action::executor`] sends what
//! [`plan`] returns and logs its [`Planned::text`] as the request sent; the confirm popup shows the
//! text of a plan made when the step is prepared (the executor plans again just before sending,
//! after the last live re-check, so the values sent can be newer than the ones shown).
//!
//! Reads only: planning never writes.

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::api::{Api, DynamicObject};
use serde_json::{Value, json};

use crate::model::fence::{self, FENCED, NetworkFence};
use crate::model::kube::OUT_OF_SERVICE_TAINT;
use crate::remedy::action::{WriteAction, out_of_service_taint};
use crate::sources::kube::network_fence::api;

/// The object an API request goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiTarget {
    /// `v1 nodes <name>`.
    Node(String),
    /// `v1 nodes <name>`, `status` subresource.
    NodeStatus(String),
    /// `v1 pods <namespace>/<name>`.
    Pod(String, String),
    /// `storage.k8s.io/v1 volumeattachments <name>`.
    VolumeAttachment(String),
    /// `apps/v1 daemonsets <namespace>/<name>`.
    DaemonSet(String, String),
    /// `csiaddons.openshift.io/v1alpha1 networkfences <name>`.
    NetworkFence(String),
}

impl ApiTarget {
    /// `group/version resource [namespace/]name` (`v1 nodes worker-2 (status)`), as
    /// [`crate::remedy::action::Request::Api`] names resources.
    pub fn resource(&self) -> String {
        match self {
            ApiTarget::Node(n) => format!("v1 nodes {n}"),
            ApiTarget::NodeStatus(n) => format!("v1 nodes {n} (status)"),
            ApiTarget::Pod(ns, n) => format!("v1 pods {ns}/{n}"),
            ApiTarget::VolumeAttachment(n) => format!("storage.k8s.io/v1 volumeattachments {n}"),
            ApiTarget::DaemonSet(ns, n) => format!("apps/v1 daemonsets {ns}/{n}"),
            ApiTarget::NetworkFence(n) => crate::remedy::action::fence_resource(n),
        }
    }
}

/// One API request with every value filled in.
#[derive(Debug, Clone, PartialEq)]
pub enum Planned {
    /// A JSON patch (`application/json-patch+json`): the operations, in order.
    Patch {
        /// Where.
        target: ApiTarget,
        /// The JSON patch operations.
        ops: Vec<Value>,
    },
    /// A delete with `DeleteOptions`.
    Delete {
        /// Where.
        target: ApiTarget,
        /// `gracePeriodSeconds`, when set (0 for a force delete).
        grace: Option<i64>,
        /// `preconditions.uid`.
        uid: Option<String>,
        /// `preconditions.resourceVersion`.
        resource_version: Option<String>,
    },
    /// A create (`POST`) of the whole object.
    Create {
        /// Where.
        target: ApiTarget,
        /// The object.
        body: Value,
    },
    /// Nothing to send: the change is already in effect (the note says which).
    Nothing(String),
}

/// Why no request could be planned: HTTP status of the read (`None` for transport errors and
/// refusals made here) and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError(pub Option<u16>, pub String);

impl Planned {
    /// The `DeleteOptions` body of a delete, as sent (`{"gracePeriodSeconds":0,"preconditions":{…}}`).
    pub fn delete_body(&self) -> Option<Value> {
        let Planned::Delete { grace, uid, resource_version, .. } = self else { return None };
        let mut pre = serde_json::Map::new();
        if let Some(u) = uid {
            pre.insert("uid".into(), json!(u));
        }
        if let Some(rv) = resource_version {
            pre.insert("resourceVersion".into(), json!(rv));
        }
        let mut body = serde_json::Map::new();
        if let Some(g) = grace {
            body.insert("gracePeriodSeconds".into(), json!(g));
        }
        if !pre.is_empty() {
            body.insert("preconditions".into(), Value::Object(pre));
        }
        Some(Value::Object(body))
    }

    /// The request as text, every value real: `PATCH v1 nodes worker-2 (patch type: json)` then the
    /// patch on the next line; `DELETE storage.k8s.io/v1 volumeattachments csi-… ` then the
    /// `DeleteOptions`; or `nothing sent: <why>`.
    pub fn text(&self) -> String {
        match self {
            Planned::Patch { target, ops } => {
                format!("PATCH {} (patch type: json)\n{}", target.resource(), Value::Array(ops.clone()))
            }
            Planned::Delete { target, .. } => {
                format!("DELETE {}\n{}", target.resource(), self.delete_body().unwrap_or(Value::Null))
            }
            Planned::Create { target, body } => format!("POST {}\n{body}", target.resource()),
            Planned::Nothing(why) => format!("nothing sent: {why}"),
        }
    }
}

fn read_err(e: kube::Error) -> PlanError {
    match e {
        kube::Error::Api(s) => PlanError(Some(s.code), s.message.clone()),
        other => PlanError(None, other.to_string()),
    }
}

fn rv_test(rv: &Option<String>) -> Value {
    json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv.clone().unwrap_or_default()})
}

/// Reads what `action` depends on through `kube` and returns the exact request that would carry
/// it out now. Not bounded here: callers wrap it in their API timeout. Errors: the read failed
/// (HTTP status and message), the object changed in a way that makes the action wrong (a
/// VolumeAttachment now on another node, a DaemonSet mount whose value changed), or `action` is
/// not an API action.
pub async fn plan(kube: &kube::Client, action: &WriteAction) -> Result<Planned, PlanError> {
    let k = kube.clone();
    match action {
        WriteAction::TaintOutOfService { node } => {
            let n = Api::<Node>::all(k).get(node).await.map_err(read_err)?;
            let taints = n.spec.as_ref().and_then(|s| s.taints.clone());
            if taints.iter().flatten().any(|t| t.key == OUT_OF_SERVICE_TAINT) {
                return Ok(Planned::Nothing("taint already present".into()));
            }
            let add = match taints {
                Some(_) => json!({"op": "add", "path": "/spec/taints/-", "value": out_of_service_taint()}),
                None => json!({"op": "add", "path": "/spec/taints", "value": [out_of_service_taint()]}),
            };
            Ok(Planned::Patch {
                target: ApiTarget::Node(node.clone()),
                ops: vec![rv_test(&n.metadata.resource_version), add],
            })
        }
        WriteAction::UntaintOutOfService { node } => {
            let n = Api::<Node>::all(k).get(node).await.map_err(read_err)?;
            let taints = n.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default();
            let Some(i) = taints.iter().position(|t| t.key == OUT_OF_SERVICE_TAINT) else {
                return Ok(Planned::Nothing("taint already absent".into()));
            };
            let ops = vec![
                rv_test(&n.metadata.resource_version),
                json!({"op": "test", "path": format!("/spec/taints/{i}/key"), "value": OUT_OF_SERVICE_TAINT}),
                json!({"op": "remove", "path": format!("/spec/taints/{i}")}),
            ];
            Ok(Planned::Patch { target: ApiTarget::Node(node.clone()), ops })
        }
        WriteAction::DeletePod { namespace, name, uid } | WriteAction::ForceDeletePod { namespace, name, uid } => {
            Ok(Planned::Delete {
                target: ApiTarget::Pod(namespace.clone(), name.clone()),
                grace: matches!(action, WriteAction::ForceDeletePod { .. }).then_some(0),
                uid: Some(uid.clone()),
                resource_version: None,
            })
        }
        WriteAction::DeleteVolumeAttachment { name, node } => {
            let v = Api::<VolumeAttachment>::all(k).get(name).await.map_err(read_err)?;
            if v.spec.node_name != *node {
                return Err(PlanError(
                    None,
                    format!("volumeattachment {name} is now on node {}, not {node}; nothing sent", v.spec.node_name),
                ));
            }
            if v.metadata.deletion_timestamp.is_some() {
                return Ok(Planned::Nothing("already being deleted".into()));
            }
            Ok(Planned::Delete {
                target: ApiTarget::VolumeAttachment(name.clone()),
                grace: None,
                uid: v.metadata.uid.clone(),
                resource_version: v.metadata.resource_version.clone(),
            })
        }
        WriteAction::RemoveVaFinalizer { name, finalizer } => {
            let v = Api::<VolumeAttachment>::all(k).get(name).await.map_err(read_err)?;
            let fins = v.metadata.finalizers.clone().unwrap_or_default();
            let Some(i) = fins.iter().position(|f| f == finalizer) else {
                return Ok(Planned::Nothing("finalizer already absent".into()));
            };
            let ops = vec![
                rv_test(&v.metadata.resource_version),
                json!({"op": "test", "path": format!("/metadata/finalizers/{i}"), "value": finalizer}),
                json!({"op": "remove", "path": format!("/metadata/finalizers/{i}")}),
            ];
            Ok(Planned::Patch { target: ApiTarget::VolumeAttachment(name.clone()), ops })
        }
        WriteAction::ReleaseVolumeInUse { node, volume } => {
            let n = Api::<Node>::all(k).get_status(node).await.map_err(read_err)?;
            let in_use = n.status.as_ref().and_then(|s| s.volumes_in_use.clone()).unwrap_or_default();
            let Some(i) = in_use.iter().position(|v| v == volume) else {
                return Ok(Planned::Nothing("volume already absent from volumesInUse".into()));
            };
            let ops = vec![
                rv_test(&n.metadata.resource_version),
                json!({"op": "test", "path": format!("/status/volumesInUse/{i}"), "value": volume}),
                json!({"op": "remove", "path": format!("/status/volumesInUse/{i}")}),
            ];
            Ok(Planned::Patch { target: ApiTarget::NodeStatus(node.clone()), ops })
        }
        WriteAction::SetMountPropagation { namespace, daemonset, container, mount_path, from, to } => {
            let ds = Api::<DaemonSet>::namespaced(k, namespace).get(daemonset).await.map_err(read_err)?;
            let containers = ds
                .spec
                .as_ref()
                .and_then(|s| s.template.spec.as_ref())
                .map(|s| s.containers.clone())
                .unwrap_or_default();
            let c = containers.iter().position(|c| c.name == *container).ok_or_else(|| {
                PlanError(None, format!("container {container} not found in daemonset {namespace}/{daemonset}"))
            })?;
            let mounts = containers[c].volume_mounts.clone().unwrap_or_default();
            let m = mounts
                .iter()
                .position(|v| v.mount_path == *mount_path)
                .ok_or_else(|| PlanError(None, format!("mount {mount_path} not found in container {container}")))?;
            let current = mounts[m].mount_propagation.clone();
            if current == *to {
                return Ok(Planned::Nothing("value already in effect".into()));
            }
            if current != *from {
                return Err(PlanError(
                    None,
                    format!("mountPropagation changed: expected {from:?}, found {current:?}; nothing sent"),
                ));
            }
            let base = format!("/spec/template/spec/containers/{c}");
            let p = format!("{base}/volumeMounts/{m}/mountPropagation");
            let mut ops = vec![
                rv_test(&ds.metadata.resource_version),
                json!({"op": "test", "path": format!("{base}/name"), "value": container}),
                json!({"op": "test", "path": format!("{base}/volumeMounts/{m}/mountPath"), "value": mount_path}),
            ];
            if let Some(f) = from {
                ops.push(json!({"op": "test", "path": p, "value": f}));
            }
            ops.push(match to {
                Some(t) => json!({"op": "add", "path": p, "value": t}),
                None => json!({"op": "remove", "path": p}),
            });
            Ok(Planned::Patch { target: ApiTarget::DaemonSet(namespace.clone(), daemonset.clone()), ops })
        }
        WriteAction::NetworkFenceCreate { .. } | WriteAction::NetworkFenceState { .. } => plan_fence(&k, action).await,
        other => Err(PlanError(None, format!("not an API action: {}", other.summary()))),
    }
}

// ---- the csi-addons NetworkFence actions: a read of the fence just before, then a create, a
// state patch guarded by `resourceVersion` and the state before, or nothing when in effect.

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
async fn plan_fence(k: &kube::Client, action: &WriteAction) -> Result<Planned, PlanError> {
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

/// What the confirm popup shows as the command of `action`: for an API action the [`plan`] made
/// from a read now ([`Planned::text`], every value real), bounded by the reader's API timeout;
/// for a Ceph call, and when planning fails or finds nothing to send, [`WriteAction::display`] (the
/// executor decides again just before sending).
pub async fn display_now(reader: &crate::remedy::action::precheck::Reader, action: &WriteAction) -> String {
    if let crate::remedy::action::Request::Api { .. } = action.request()
        && let Ok(Ok(p)) = tokio::time::timeout(reader.api_timeout, plan(&reader.kube, action)).await
        && !matches!(p, Planned::Nothing(_))
    {
        return p.text();
    }
    action.display(Some(&reader.ceph))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plans made on the simulated cluster of a training scenario carry the values read: the
    /// VolumeAttachment's UID and resourceVersion, the finalizer's index.
    #[tokio::test]
    async fn plans_carry_the_values_read() {
        let sc = crate::sources::sim::scenario::Scenario::embedded("lost-node-multi-attach").unwrap().unwrap();
        let sim = sc.start(jiff::Timestamp::now(), 0.0);
        let kube = sim.client();
        let vas = Api::<VolumeAttachment>::all(kube.clone()).list(&Default::default()).await.unwrap();
        let va = vas.items.iter().find(|v| v.metadata.finalizers.as_ref().is_some_and(|f| !f.is_empty())).unwrap();
        let (name, node) = (va.metadata.name.clone().unwrap(), va.spec.node_name.clone());
        let (uid, rv) = (va.metadata.uid.clone().unwrap(), va.metadata.resource_version.clone().unwrap());
        let fins = va.metadata.finalizers.clone().unwrap();
        let del = plan(&kube, &WriteAction::DeleteVolumeAttachment { name: name.clone(), node }).await.unwrap();
        assert_eq!(
            del.text(),
            format!(
                "DELETE storage.k8s.io/v1 volumeattachments {name}\n{{\"preconditions\":{{\"resourceVersion\":\"{rv}\",\"uid\":\"{uid}\"}}}}"
            )
        );
        let last = fins.len() - 1;
        let rm = WriteAction::RemoveVaFinalizer { name: name.clone(), finalizer: fins[last].clone() };
        let Planned::Patch { target, ops } = plan(&kube, &rm).await.unwrap() else { panic!("a patch") };
        assert_eq!(target, ApiTarget::VolumeAttachment(name));
        assert_eq!(ops[0]["value"], json!(rv));
        assert_eq!(ops[1]["path"], json!(format!("/metadata/finalizers/{last}")));
        assert_eq!(ops[2], json!({"op": "remove", "path": format!("/metadata/finalizers/{last}")}));
        let gone = WriteAction::RemoveVaFinalizer { name: "nope".into(), finalizer: "x".into() };
        assert!(matches!(plan(&kube, &gone).await, Err(PlanError(Some(404), _))));
    }

    #[test]
    fn texts_carry_every_value() {
        let d = Planned::Delete {
            target: ApiTarget::VolumeAttachment("csi-1".into()),
            grace: None,
            uid: Some("5e00-1".into()),
            resource_version: Some("42".into()),
        };
        assert_eq!(
            d.text(),
            "DELETE storage.k8s.io/v1 volumeattachments csi-1\n{\"preconditions\":{\"resourceVersion\":\"42\",\"uid\":\"5e00-1\"}}"
        );
        let f = Planned::Delete {
            target: ApiTarget::Pod("a".into(), "b".into()),
            grace: Some(0),
            uid: None,
            resource_version: None,
        };
        assert_eq!(f.text(), "DELETE v1 pods a/b\n{\"gracePeriodSeconds\":0}");
        let p = Planned::Patch {
            target: ApiTarget::NodeStatus("n1".into()),
            ops: vec![json!({"op": "remove", "path": "/status/volumesInUse/1"})],
        };
        assert_eq!(
            p.text(),
            "PATCH v1 nodes n1 (status) (patch type: json)\n[{\"op\":\"remove\",\"path\":\"/status/volumesInUse/1\"}]"
        );
        assert_eq!(Planned::Nothing("taint already present".into()).text(), "nothing sent: taint already present");
    }
}
