//! The only code that sends writes. An [`Executor`] cannot be built in read-only mode
//! ([`Executor::new`] returns [`ReadOnly`]), and it only runs [`Approved`] actions (see
//! [`crate::remedy::action::safety::approve`]). So with `--read-only` no write request can be sent at all.
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
use serde_json::Value;

use crate::remedy::action::resolve::{ApiTarget, PlanError, Planned, plan};
use crate::remedy::action::safety::Approved;
use crate::remedy::action::{Request, WriteAction};
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
    /// The request as sent, every value real: the full argv of a Ceph call, or the API verb,
    /// resource and body with the `resourceVersion`, UID and list indexes read just before
    /// ([`Planned::text`]). `None` when nothing was sent (already in effect, or refused before
    /// sending).
    pub sent: Option<String>,
}

impl ExecResult {
    /// The journal's `outcome` record of this result for journal step `step`.
    pub fn outcome(&self, step: u32) -> crate::remedy::journal::ActionOutcome {
        crate::remedy::journal::ActionOutcome {
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
                let sent = Some(action.display(Some(&self.ceph)));
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
                        sent,
                    },
                    Err(CephError::Exit { code, stderr, .. }) => {
                        ExecResult { ok: false, exit_code: Some(code), api_status: None, stderr, duration, sent }
                    }
                    Err(e) => ExecResult {
                        ok: false,
                        exit_code: None,
                        api_status: None,
                        stderr: e.to_string(),
                        duration,
                        sent,
                    },
                }
            }
            Request::Api { .. } => {
                // the request text is known once planned; a timeout may cut the call after that
                let sent_cell = std::sync::Mutex::new(None);
                let res = tokio::time::timeout(self.api_timeout, async {
                    let (r, sent) = self.api(action).await;
                    *sent_cell.lock().unwrap_or_else(|e| e.into_inner()) = sent;
                    r
                })
                .await;
                let sent = sent_cell.into_inner().unwrap_or_else(|e| e.into_inner());
                let duration = started.elapsed();
                match res {
                    Ok(Ok(note)) => {
                        ExecResult { ok: true, exit_code: None, api_status: Some(200), stderr: note, duration, sent }
                    }
                    Ok(Err(Fail::Api(status, msg))) => {
                        ExecResult { ok: false, exit_code: None, api_status: status, stderr: msg, duration, sent }
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
                        sent,
                    },
                }
            }
        }
    }

    /// Plans the request from a fresh read ([`plan`]) and sends it. Returns the note for the
    /// journal (empty, or why nothing was sent) and the request text as sent.
    async fn api(&self, action: &WriteAction) -> (Result<String, Fail>, Option<String>) {
        let planned = match plan(&self.kube, action).await {
            Ok(p) => p,
            Err(PlanError(status, msg)) => return (Err(Fail::Api(status, msg)), None),
        };
        let k = self.kube.clone();
        let sent = match &planned {
            Planned::Nothing(why) => return (Ok(format!("{why}; nothing sent")), None),
            p => Some(p.text()),
        };
        let res = match planned {
            Planned::Patch { target, ops } => match target {
                ApiTarget::Node(n) => patch(&Api::<Node>::all(k), &n, ops).await,
                ApiTarget::NodeStatus(n) => patch_status(&Api::<Node>::all(k), &n, ops).await,
                ApiTarget::Pod(ns, n) => patch(&Api::<Pod>::namespaced(k, &ns), &n, ops).await,
                ApiTarget::VolumeAttachment(n) => patch(&Api::<VolumeAttachment>::all(k), &n, ops).await,
                ApiTarget::DaemonSet(ns, n) => patch(&Api::<DaemonSet>::namespaced(k, &ns), &n, ops).await,
                ApiTarget::NetworkFence(n) => patch(&fence_api(&k), &n, ops).await,
            },
            Planned::Create { target: ApiTarget::NetworkFence(_), body } => create_fence(&fence_api(&k), body).await,
            Planned::Create { target, .. } => {
                Err(Fail::Api(None, format!("no create of {} is planned", target.resource())))
            }
            Planned::Delete { target, grace, uid, resource_version } => {
                let dp = DeleteParams {
                    grace_period_seconds: grace.map(|g| g.max(0) as u32),
                    preconditions: Some(Preconditions { uid, resource_version }),
                    ..Default::default()
                };
                match target {
                    ApiTarget::Pod(ns, n) => delete(&Api::<Pod>::namespaced(k, &ns), &n, &dp).await,
                    ApiTarget::VolumeAttachment(n) => delete(&Api::<VolumeAttachment>::all(k), &n, &dp).await,
                    other => Err(Fail::Api(None, format!("no delete of {} is planned", other.resource()))),
                }
            }
            Planned::Nothing(why) => Ok(why),
        };
        (res, sent)
    }
}

/// The csi-addons NetworkFence API (dynamic: no generated type).
fn fence_api(k: &kube::Client) -> Api<kube::api::DynamicObject> {
    use crate::model::fence::{KIND, PLURAL};
    crate::sources::kube::network_fence::api(k, KIND, PLURAL)
}

async fn create_fence(api: &Api<kube::api::DynamicObject>, body: Value) -> Result<String, Fail> {
    let obj: kube::api::DynamicObject =
        serde_json::from_value(body).map_err(|e| Fail::Api(None, format!("building the NetworkFence: {e}")))?;
    api.create(&kube::api::PostParams::default(), &obj).await.map_err(fail)?;
    Ok(String::new())
}

fn fail(e: kube::Error) -> Fail {
    match e {
        kube::Error::Api(s) => Fail::Api(Some(s.code), s.message.clone()),
        other => Fail::Api(None, other.to_string()),
    }
}

fn json_patch(ops: Vec<Value>) -> Result<Patch<()>, Fail> {
    Ok(Patch::Json(
        serde_json::from_value(Value::Array(ops)).map_err(|e| Fail::Api(None, format!("building JSON patch: {e}")))?,
    ))
}

async fn patch<K>(api: &Api<K>, name: &str, ops: Vec<Value>) -> Result<String, Fail>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.patch(name, &PatchParams::default(), &json_patch(ops)?).await.map_err(fail)?;
    Ok(String::new())
}

async fn patch_status<K>(api: &Api<K>, name: &str, ops: Vec<Value>) -> Result<String, Fail>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.patch_status(name, &PatchParams::default(), &json_patch(ops)?).await.map_err(fail)?;
    Ok(String::new())
}

async fn delete<K>(api: &Api<K>, name: &str, dp: &DeleteParams) -> Result<String, Fail>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.delete(name, dp).await.map_err(fail)?;
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
