//! Rook mode: `rbd` / `ceph` run inside a pod of the Rook cluster's namespace through the
//! Kubernetes exec API (`pods/exec`), the way `kubectl rook-ceph` runs them
//! (github.com/rook/kubectl-rook-ceph, `pkg/exec/exec.go`): in the toolbox pod
//! (`app=rook-ceph-tools`, container `rook-ceph-tools`, its own `/etc/ceph`) or, where there is
//! none (ODF, many Rook installs), in the operator pod (`app=rook-ceph-operator`, container
//! `rook-ceph-operator`) with the cluster's config and admin keyring that the operator writes
//! under `/var/lib/rook/<namespace>/`.
//!
//! The pod is chosen at the first call and kept for the session; when a call cannot reach it
//! (the pod went away, its node is gone) the choice is made again and the call retried once on
//! the new pod.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams, ListParams};

use super::transport::{CephTransport, Completed, StartError, Tool};
pub use crate::model::ceph_error::RookError;

/// Label selector of the Rook operator pod.
pub const OPERATOR_SELECTOR: &str = "app=rook-ceph-operator";
/// The toolbox Deployment's container (Rook's `deploy/examples/toolbox.yaml`).
pub const TOOLBOX_CONTAINER: &str = "rook-ceph-tools";
/// The operator Deployment's container (Rook's `deploy/examples/operator.yaml`).
pub const OPERATOR_CONTAINER: &str = "rook-ceph-operator";

/// Which kind of Rook pod runs the CLIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RookRole {
    /// The toolbox: `rbd` / `ceph` as they are (its `/etc/ceph/ceph.conf` and keyring).
    Toolbox,
    /// The operator: `--conf` and `--keyring` of the cluster's files under `/var/lib/rook/<ns>/`.
    Operator,
}

/// The pod (and container) chosen to run the CLIs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RookTarget {
    /// Toolbox or operator.
    pub role: RookRole,
    /// The pod's namespace (= the Ceph cluster's namespace).
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The container exec runs in: the role's container when the pod has it, else its first.
    pub container: String,
}

impl RookTarget {
    /// The options that follow the binary: none in the toolbox; in the operator pod
    /// `--conf=/var/lib/rook/<ns>/<ns>.config --keyring=/var/lib/rook/<ns>/client.admin.keyring`
    /// (`kubectl rook-ceph` passes the same `--conf`; the config it names points at that keyring).
    pub fn identity(&self) -> Vec<String> {
        match self.role {
            RookRole::Toolbox => vec![],
            RookRole::Operator => {
                let ns = &self.namespace;
                vec![
                    format!("--conf=/var/lib/rook/{ns}/{ns}.config"),
                    format!("--keyring=/var/lib/rook/{ns}/client.admin.keyring"),
                ]
            }
        }
    }

    /// `argv` as it runs in this pod: the program, [`RookTarget::identity`], the rest. The
    /// program is the binary, or `BIN -c CODE` for an interpreter (the bulk reader): its own
    /// options must come before the code, the identity options after it.
    pub fn argv(&self, argv: &[String]) -> Vec<String> {
        let head = if argv.get(1).map(String::as_str) == Some("-c") { 3 } else { 1 };
        let mut v: Vec<String> = argv.iter().take(head).cloned().collect();
        v.extend(self.identity());
        v.extend(argv.iter().skip(head).cloned());
        v
    }

    /// For the status bar: `rook toolbox rook-ceph/rook-ceph-tools-7d9f6c8b5-x2x7q`,
    /// `rook operator rook-ceph/rook-ceph-operator-…`.
    pub fn describe(&self) -> String {
        let role = match self.role {
            RookRole::Toolbox => "toolbox",
            RookRole::Operator => "operator",
        };
        format!("rook {role} {}/{}", self.namespace, self.pod)
    }
}

/// True for a pod that can run a command: phase `Running` and not being deleted.
fn usable(p: &Pod) -> bool {
    p.metadata.deletion_timestamp.is_none() && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

/// The first usable pod of `pods` as a target of `role`, or `None`.
fn first_usable(pods: &[Pod], role: RookRole, namespace: &str) -> Option<RookTarget> {
    let p = pods.iter().find(|p| usable(p))?;
    let wanted = match role {
        RookRole::Toolbox => TOOLBOX_CONTAINER,
        RookRole::Operator => OPERATOR_CONTAINER,
    };
    let containers = p.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    let container = containers
        .iter()
        .find(|c| c.name == wanted)
        .or(containers.first())
        .map_or_else(|| wanted.to_string(), |c| c.name.clone());
    Some(RookTarget { role, namespace: namespace.to_string(), pod: p.metadata.name.clone()?, container })
}

/// Chooses the pod: the first running toolbox pod of `toolbox`, else the first running operator
/// pod of `operator` (`None` when the operator pods were not listed), else [`RookError::NoPod`].
pub fn choose(
    namespace: &str,
    toolbox_selector: &str,
    toolbox: &[Pod],
    operator: Option<&[Pod]>,
) -> Result<RookTarget, RookError> {
    first_usable(toolbox, RookRole::Toolbox, namespace)
        .or_else(|| operator.and_then(|o| first_usable(o, RookRole::Operator, namespace)))
        .ok_or_else(|| RookError::NoPod {
            namespace: namespace.to_string(),
            toolbox: toolbox_selector.to_string(),
            operator: OPERATOR_SELECTOR.to_string(),
        })
}

/// The Rook transport: lists, chooses, keeps and re-chooses the pod, and runs the calls there.
pub(super) struct Rook {
    client: Option<kube::Client>,
    namespace: String,
    selector: String,
    python: String,
    target: Arc<Mutex<Option<RookTarget>>>,
}

impl Rook {
    /// Rook mode in `namespace`, toolbox pods matching `selector`; the bulk reader runs with
    /// `python` there (`ceph.python`: the Ceph images' own is `/usr/bin/python3`).
    pub(super) fn new(client: Option<kube::Client>, namespace: String, selector: String, python: String) -> Self {
        Self { client, namespace, selector, python, target: Arc::default() }
    }

    fn cached(&self) -> Option<RookTarget> {
        self.target.lock().ok().and_then(|t| t.clone())
    }

    fn keep(&self, t: Option<RookTarget>) {
        if let Ok(mut slot) = self.target.lock() {
            *slot = t;
        }
    }

    async fn list(&self, pods: &Api<Pod>, selector: &str) -> Result<Vec<Pod>, RookError> {
        let list = pods.list(&ListParams::default().labels(selector)).await.map_err(|e| RookError::List {
            namespace: self.namespace.clone(),
            selector: selector.to_string(),
            reason: crate::text::sanitize(&e.to_string()),
        })?;
        Ok(list.items)
    }

    async fn choose(&self, pods: &Api<Pod>) -> Result<RookTarget, RookError> {
        let toolbox = self.list(pods, &self.selector).await?;
        let operator = if toolbox.iter().any(usable) { None } else { Some(self.list(pods, OPERATOR_SELECTOR).await?) };
        let t = choose(&self.namespace, &self.selector, &toolbox, operator.as_deref())?;
        tracing::info!(via = %t.describe(), container = %t.container, "rook: chose the pod that runs rbd/ceph");
        self.keep(Some(t.clone()));
        Ok(t)
    }
}

/// Runs `argv` in `t` and collects stdout, stderr and the exit code from the exec API's final
/// `Status` ([`exit_code_of`]).
async fn exec(pods: &Api<Pod>, t: &RookTarget, argv: &[String]) -> Result<Completed, RookError> {
    let ap = AttachParams::default().container(t.container.clone()).stdin(false).stdout(true).stderr(true);
    let mut proc = pods.exec(&t.pod, t.argv(argv), &ap).await.map_err(|e| RookError::Exec {
        namespace: t.namespace.clone(),
        pod: t.pod.clone(),
        reason: crate::text::sanitize(&e.to_string()),
    })?;
    let (out, err) = super::transport::read_both(proc.stdout(), proc.stderr()).await;
    let status = match proc.take_status() {
        Some(s) => s.await,
        None => None,
    };
    let _ = proc.join().await;
    Ok((
        exit_code_of(status.as_ref()),
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    ))
}

impl CephTransport for Rook {
    fn prefix(&self, tool: Tool) -> Vec<String> {
        match tool {
            Tool::Rbd => vec!["rbd".into()],
            Tool::Ceph => vec!["ceph".into()],
            Tool::Python => vec![self.python.clone(), "-c".into(), super::transport::BULK_SCRIPT.into()],
        }
    }

    fn run<'a>(&'a self, argv: &'a [String]) -> BoxFuture<'a, Result<Completed, StartError>> {
        Box::pin(async move {
            let client = self.client.clone().ok_or(RookError::NoClient)?;
            let pods: Api<Pod> = Api::namespaced(client, &self.namespace);
            let target = match self.cached() {
                Some(t) => t,
                None => self.choose(&pods).await?,
            };
            match exec(&pods, &target, argv).await {
                Ok(c) => Ok(c),
                Err(e) => {
                    // The pod may be gone: choose again; retry only on another pod.
                    tracing::warn!(error = %e, "rook: exec failed; choosing the pod again");
                    self.keep(None);
                    let again = self.choose(&pods).await?;
                    if again == target {
                        return Err(e.into());
                    }
                    Ok(exec(&pods, &again, argv).await?)
                }
            }
        })
    }

    fn via(&self) -> Option<String> {
        self.cached().map(|t| t.describe())
    }

    fn name(&self) -> &'static str {
        "Rook (exec into the toolbox or operator pod)"
    }
}

/// Exit code from the exec API's final `Status`: `Success` → 0; `NonZeroExitCode` carries the code
/// in `details.causes[reason=ExitCode].message`; anything else → -1.
pub fn exit_code_of(status: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>) -> i32 {
    let Some(s) = status else { return -1 };
    if s.status.as_deref() == Some("Success") {
        return 0;
    }
    s.details
        .as_ref()
        .and_then(|d| d.causes.as_ref())
        .and_then(|c| c.iter().find(|c| c.reason.as_deref() == Some("ExitCode")))
        .and_then(|c| c.message.as_deref())
        .and_then(|m| m.parse().ok())
        .unwrap_or(-1)
}

#[cfg(test)]
#[path = "rook_tests.rs"]
mod tests;
