//! The only code that sends writes. An [`Executor`] cannot be built in read-only mode
//! ([`Executor::new`] returns [`ReadOnly`]), and it only runs [`Approved`] actions (see
//! [`super::safety::approve`]). So with `--read-only` no write request can be sent at all.
//!
//! Kubernetes writes are JSON patches guarded by `test` operations on `metadata.resourceVersion`
//! and on the element being changed, or deletes with a UID precondition: if the object changed
//! between the re-check and the write, the API server refuses (HTTP 409/422) and nothing changes.
//! Every call is bounded: API calls by `api_timeout`, Ceph calls by the [`CephCli`] timers.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use serde_json::{Value, json};

use super::action::{Action, Request, out_of_service_taint};
use super::safety::Approved;
use crate::model::kube::OUT_OF_SERVICE_TAINT;
use crate::sources::ceph::cli::{CephCli, CephError};

/// Returned by [`Executor::new`] in read-only mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("read-only mode: no write can be sent (started with --read-only)")]
pub struct ReadOnly;

/// What happened when an action was sent. Becomes the journal's `outcome`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecResult {
    /// The write succeeded (or was already in effect; see `stderr`).
    pub ok: bool,
    /// Exit code of a Ceph CLI call (`None` for API calls, timeouts, spawn failures).
    pub exit_code: Option<i32>,
    /// HTTP status of an API call (200 on success; `None` for timeouts / transport errors).
    pub api_status: Option<u16>,
    /// stderr of the CLI (`ceph` prints its status there), or the API error message.
    pub stderr: String,
    /// Wall time.
    pub duration: Duration,
}

impl ExecResult {
    /// The journal's `outcome` record of this result for journal step `step`.
    pub fn outcome(&self, step: u32) -> super::journal::Outcome {
        super::journal::Outcome {
            step,
            ok: self.ok,
            exit_code: self.exit_code,
            api_status: self.api_status,
            stderr: self.stderr.clone(),
            duration_ms: self.duration.as_millis() as u64,
        }
    }
}

/// Sends writes. Cheap to clone.
#[derive(Clone)]
pub struct Executor {
    kube: kube::Client,
    ceph: CephCli,
    api_timeout: Duration,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor").field("api_timeout", &self.api_timeout).finish_non_exhaustive()
    }
}

enum Fail {
    Api(Option<u16>, String),
}

impl Executor {
    /// A write executor, or [`ReadOnly`] when `read_only` is set.
    pub fn new(read_only: bool, kube: kube::Client, ceph: CephCli, api_timeout: Duration) -> Result<Self, ReadOnly> {
        if read_only {
            return Err(ReadOnly);
        }
        Ok(Self { kube, ceph, api_timeout })
    }

    /// The Kubernetes client writes go through (the Lease manager uses it).
    pub(crate) fn kube(&self) -> &kube::Client {
        &self.kube
    }

    /// The API timeout.
    pub(crate) fn api_timeout(&self) -> Duration {
        self.api_timeout
    }

    /// The Ceph runner (the backup's export uses it).
    pub(crate) fn ceph(&self) -> &CephCli {
        &self.ceph
    }

    /// Sends an approved action. Never panics; every failure is an `ExecResult` with `ok: false`.
    pub async fn execute(&self, approved: &Approved) -> ExecResult {
        let started = Instant::now();
        let action = approved.action();
        match action.request() {
            Request::Argv { tool, args } => {
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                let res = if action.rbd_rejects_format() {
                    self.ceph.run_plain(tool, &refs).await
                } else {
                    self.ceph.run(tool, &refs).await
                };
                let duration = started.elapsed();
                match res {
                    Ok(out) => ExecResult {
                        ok: true,
                        exit_code: Some(0),
                        api_status: None,
                        stderr: crate::text::sanitize(out.stderr.trim()),
                        duration,
                    },
                    Err(CephError::Exit { code, stderr, .. }) => {
                        ExecResult { ok: false, exit_code: Some(code), api_status: None, stderr, duration }
                    }
                    Err(e) => {
                        ExecResult { ok: false, exit_code: None, api_status: None, stderr: e.to_string(), duration }
                    }
                }
            }
            Request::Api { .. } => {
                let res = tokio::time::timeout(self.api_timeout, self.api(action)).await;
                let duration = started.elapsed();
                match res {
                    Ok(Ok(note)) => {
                        ExecResult { ok: true, exit_code: None, api_status: Some(200), stderr: note, duration }
                    }
                    Ok(Err(Fail::Api(status, msg))) => {
                        ExecResult { ok: false, exit_code: None, api_status: status, stderr: msg, duration }
                    }
                    Err(_) => ExecResult {
                        ok: false,
                        exit_code: None,
                        api_status: None,
                        stderr: format!(
                            "timed out after {} s: the request may or may not have been applied; re-check",
                            self.api_timeout.as_secs()
                        ),
                        duration,
                    },
                }
            }
        }
    }

    async fn api(&self, action: &Action) -> Result<String, Fail> {
        let k = self.kube.clone();
        match action {
            Action::TaintOutOfService { node } => {
                let api: Api<Node> = Api::all(k);
                let n = api.get(node).await.map_err(fail)?;
                let taints = n.spec.as_ref().and_then(|s| s.taints.clone());
                if taints.iter().flatten().any(|t| t.key == OUT_OF_SERVICE_TAINT) {
                    return Ok("taint already present; nothing sent".into());
                }
                let add = match taints {
                    Some(_) => json!({"op": "add", "path": "/spec/taints/-", "value": out_of_service_taint()}),
                    None => json!({"op": "add", "path": "/spec/taints", "value": [out_of_service_taint()]}),
                };
                patch(&api, node, vec![rv_test(&n.metadata.resource_version), add]).await
            }
            Action::UntaintOutOfService { node } => {
                let api: Api<Node> = Api::all(k);
                let n = api.get(node).await.map_err(fail)?;
                let taints = n.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default();
                let Some(i) = taints.iter().position(|t| t.key == OUT_OF_SERVICE_TAINT) else {
                    return Ok("taint already absent; nothing sent".into());
                };
                let ops = vec![
                    rv_test(&n.metadata.resource_version),
                    json!({"op": "test", "path": format!("/spec/taints/{i}/key"), "value": OUT_OF_SERVICE_TAINT}),
                    json!({"op": "remove", "path": format!("/spec/taints/{i}")}),
                ];
                patch(&api, node, ops).await
            }
            Action::DeletePod { namespace, name, uid } | Action::ForceDeletePod { namespace, name, uid } => {
                let api: Api<Pod> = Api::namespaced(k, namespace);
                let dp = DeleteParams {
                    grace_period_seconds: matches!(action, Action::ForceDeletePod { .. }).then_some(0),
                    preconditions: Some(Preconditions { uid: Some(uid.clone()), resource_version: None }),
                    ..Default::default()
                };
                api.delete(name, &dp).await.map_err(fail)?;
                Ok(String::new())
            }
            Action::DeleteVolumeAttachment { name, node } => {
                let api: Api<VolumeAttachment> = Api::all(k);
                let v = api.get(name).await.map_err(fail)?;
                if v.spec.node_name != *node {
                    return Err(Fail::Api(
                        None,
                        format!(
                            "volumeattachment {name} is now on node {}, not {node}; nothing sent",
                            v.spec.node_name
                        ),
                    ));
                }
                if v.metadata.deletion_timestamp.is_some() {
                    return Ok("already being deleted; nothing sent".into());
                }
                let dp = DeleteParams {
                    preconditions: Some(Preconditions {
                        uid: v.metadata.uid.clone(),
                        resource_version: v.metadata.resource_version.clone(),
                    }),
                    ..Default::default()
                };
                api.delete(name, &dp).await.map_err(fail)?;
                Ok(String::new())
            }
            Action::RemoveVaFinalizer { name, finalizer } => {
                let api: Api<VolumeAttachment> = Api::all(k);
                let v = api.get(name).await.map_err(fail)?;
                let fins = v.metadata.finalizers.clone().unwrap_or_default();
                let Some(i) = fins.iter().position(|f| f == finalizer) else {
                    return Ok("finalizer already absent; nothing sent".into());
                };
                let ops = vec![
                    rv_test(&v.metadata.resource_version),
                    json!({"op": "test", "path": format!("/metadata/finalizers/{i}"), "value": finalizer}),
                    json!({"op": "remove", "path": format!("/metadata/finalizers/{i}")}),
                ];
                patch(&api, name, ops).await
            }
            Action::ReleaseVolumeInUse { node, volume } => {
                let api: Api<Node> = Api::all(k);
                let n = api.get_status(node).await.map_err(fail)?;
                let in_use = n.status.as_ref().and_then(|s| s.volumes_in_use.clone()).unwrap_or_default();
                let Some(i) = in_use.iter().position(|v| v == volume) else {
                    return Ok("volume already absent from volumesInUse; nothing sent".into());
                };
                let ops = vec![
                    rv_test(&n.metadata.resource_version),
                    json!({"op": "test", "path": format!("/status/volumesInUse/{i}"), "value": volume}),
                    json!({"op": "remove", "path": format!("/status/volumesInUse/{i}")}),
                ];
                let p: Patch<()> = Patch::Json(
                    serde_json::from_value(Value::Array(ops))
                        .map_err(|e| Fail::Api(None, format!("building JSON patch: {e}")))?,
                );
                api.patch_status(node, &PatchParams::default(), &p).await.map_err(fail)?;
                Ok(String::new())
            }
            Action::SetMountPropagation { namespace, daemonset, container, mount_path, from, to } => {
                let api: Api<DaemonSet> = Api::namespaced(k, namespace);
                let ds = api.get(daemonset).await.map_err(fail)?;
                let containers = ds
                    .spec
                    .as_ref()
                    .and_then(|s| s.template.spec.as_ref())
                    .map(|s| s.containers.clone())
                    .unwrap_or_default();
                let c = containers.iter().position(|c| c.name == *container).ok_or_else(|| {
                    Fail::Api(None, format!("container {container} not found in daemonset {namespace}/{daemonset}"))
                })?;
                let mounts = containers[c].volume_mounts.clone().unwrap_or_default();
                let m = mounts
                    .iter()
                    .position(|v| v.mount_path == *mount_path)
                    .ok_or_else(|| Fail::Api(None, format!("mount {mount_path} not found in container {container}")))?;
                let current = mounts[m].mount_propagation.clone();
                if current == *to {
                    return Ok("value already in effect; nothing sent".into());
                }
                if current != *from {
                    return Err(Fail::Api(
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
                patch(&api, daemonset, ops).await
            }
            other => Err(Fail::Api(None, format!("not an API action: {}", other.summary()))),
        }
    }
}

fn rv_test(rv: &Option<String>) -> Value {
    json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv.clone().unwrap_or_default()})
}

fn fail(e: kube::Error) -> Fail {
    match e {
        kube::Error::Api(s) => Fail::Api(Some(s.code), s.message.clone()),
        other => Fail::Api(None, other.to_string()),
    }
}

async fn patch<K>(api: &Api<K>, name: &str, ops: Vec<Value>) -> Result<String, Fail>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let p: Patch<()> = Patch::Json(
        serde_json::from_value(Value::Array(ops)).map_err(|e| Fail::Api(None, format!("building JSON patch: {e}")))?,
    );
    api.patch(name, &PatchParams::default(), &p).await.map_err(fail)?;
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn read_only_cannot_build_an_executor() {
        let cfg = kube::Config::new("https://127.0.0.1:1".parse().unwrap());
        let client = kube::Client::try_from(cfg).unwrap();
        let cli = CephCli::new(
            crate::sources::ceph::cli::Access::Local { conf: None, id: None, keyring: None },
            crate::config::Config::defaults().ceph,
            None,
        );
        let e = Executor::new(true, client.clone(), cli.clone(), Duration::from_secs(1)).unwrap_err();
        assert!(e.to_string().contains("read-only"));
        assert!(Executor::new(false, client, cli, Duration::from_secs(1)).is_ok());
    }
}
