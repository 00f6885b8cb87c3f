//! kubeconfig exec credential plugins (`users[].user.exec`, client-go's `ExecCredential`
//! protocol): kube-rs runs them; this module bounds the wait and says a failure in one line.
//!
//! - kube-rs runs the plugin synchronously while it builds the client (with rustls, more than
//!   once: for the TLS identity, the auth layer and the client's expiry) and again from a request
//!   when the token it gave is within 60 s of its `expirationTimestamp`.
//! - The build runs on a thread of its own, awaited for [`EXEC_PLUGIN_TIMEOUT`] at most: a plugin
//!   that hangs (a login waiting for a browser) fails the connection with
//!   [`ExecPluginError::TimedOut`]. kube-rs owns the child process, so it is not killed: it is left
//!   to finish on its own, and nothing waits for it at exit.
//! - A refresh from a request is bounded by that request's bounds
//!   ([`HEADERS_TIMEOUT`](crate::sources::kube::client::HEADERS_TIMEOUT)).
//! - Without `interactiveMode: Never` the plugin inherits stdin and stderr (as with kubectl), so
//!   what it says on stderr reaches the terminal; with it, the last line of its stderr is part of
//!   [`ExecPluginError::Failed`].

use std::time::Duration;

use kube::client::AuthError;
use kube::config::ExecConfig;

/// How long building a client may wait for its exec credential plugin(s). kubectl has no bound; a
/// login flow needing a person has this long.
pub const EXEC_PLUGIN_TIMEOUT: Duration = Duration::from_secs(30);

/// An exec credential plugin that gave no usable credential. `command` is the kubeconfig's
/// `exec.command` as written (never its arguments or environment: they may hold secrets).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecPluginError {
    /// It did not exit within `after`.
    #[error("exec credential plugin {command:?} did not answer within {} s", after.as_secs())]
    TimedOut {
        /// `exec.command`.
        command: String,
        /// The bound ([`EXEC_PLUGIN_TIMEOUT`]).
        after: Duration,
    },
    /// It exited unsuccessfully.
    #[error("exec credential plugin {command:?} failed ({status}){}", stderr.as_ref().map(|s| format!(": {s}")).unwrap_or_default())]
    Failed {
        /// `exec.command`.
        command: String,
        /// `exit status: 1`, `signal: 9 (SIGKILL)`.
        status: String,
        /// The last non-empty line of its stderr, when captured (`interactiveMode: Never`).
        stderr: Option<String>,
    },
    /// It could not be started, or its output is no `ExecCredential` with a `status`.
    #[error("exec credential plugin {command:?}: {why}")]
    Unusable {
        /// `exec.command`.
        command: String,
        /// kube-rs's reason (`unable to run auth exec: No such file or directory (os error 2)`).
        why: String,
    },
}

impl ExecPluginError {
    /// The plugin error in `e`, when `e` is kube-rs's error about running the plugin of `exec`.
    pub fn from_auth(e: &AuthError, exec: &ExecConfig) -> Option<Self> {
        let command = exec.command.clone().unwrap_or_default();
        Some(match e {
            AuthError::AuthExecRun { out, .. } => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let last = stderr.lines().map(str::trim).rfind(|l| !l.is_empty());
                Failed { command, status: out.status.to_string(), stderr: last.map(crate::text::sanitize) }
            }
            AuthError::AuthExecStart(_)
            | AuthError::AuthExecParse(_)
            | AuthError::ExecPluginFailed
            | AuthError::AuthExec(_)
            | AuthError::MissingCommand
            | AuthError::MalformedTokenExpirationDate(_) => Unusable { command, why: e.to_string() },
            _ => return None,
        })
    }
}

use ExecPluginError::{Failed, Unusable};

/// The [`AuthError`] in `e`'s source chain, if any.
pub fn auth_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a AuthError> {
    let mut src = Some(e);
    while let Some(s) = src {
        if let Some(a) = s.downcast_ref::<AuthError>() {
            return Some(a);
        }
        src = s.source();
    }
    None
}

/// Runs `build` (kube-rs's client build, which runs `exec`'s plugin) on a thread of its own and
/// waits `after` at most. Errors: [`ExecPluginError`] (timed out, or the plugin's failure), else
/// `build`'s own error.
pub async fn bounded_build<T: Send + 'static>(
    exec: &ExecConfig,
    after: Duration,
    build: impl FnOnce() -> Result<T, kube::Error> + Send + 'static,
) -> color_eyre::Result<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    // a detached thread, not spawn_blocking: the runtime's shutdown would wait for a hung plugin
    std::thread::Builder::new().name("exec-credential".into()).spawn(move || {
        let _ = tx.send(build());
    })?;
    let command = exec.command.clone().unwrap_or_default();
    match tokio::time::timeout(after, rx).await {
        Err(_) => Err(ExecPluginError::TimedOut { command, after }.into()),
        Ok(Err(_)) => color_eyre::eyre::bail!("exec credential plugin {command:?}: the client build stopped"),
        Ok(Ok(Ok(t))) => Ok(t),
        Ok(Ok(Err(e))) => match auth_error(&e).and_then(|a| ExecPluginError::from_auth(a, exec)) {
            Some(p) => Err(p.into()),
            None => Err(e.into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(cmd: &str) -> ExecConfig {
        serde_json::from_value(serde_json::json!({"apiVersion": "client.authentication.k8s.io/v1", "command": cmd}))
            .unwrap()
    }

    #[tokio::test]
    async fn a_hung_build_is_a_timeout_naming_the_command_only() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let started = std::time::Instant::now();
        let r = bounded_build(&exec("/bin/login-helper"), Duration::from_millis(200), move || {
            let _ = rx.recv();
            Ok(())
        })
        .await;
        let e = r.unwrap_err();
        assert_eq!(
            e.downcast_ref::<ExecPluginError>(),
            Some(&ExecPluginError::TimedOut { command: "/bin/login-helper".into(), after: Duration::from_millis(200) })
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        drop(tx);
    }

    #[test]
    fn a_failed_plugin_says_its_status_and_last_stderr_line() {
        use std::os::unix::process::ExitStatusExt;
        let out = std::process::Output {
            status: std::process::ExitStatus::from_raw(1 << 8),
            stdout: b"{}".to_vec(),
            stderr: b"trying\nerror: refresh token expired\n\n".to_vec(),
        };
        let e = AuthError::AuthExecRun { cmd: "SECRET=x \"p\"".into(), out: Box::new(out) };
        let p = ExecPluginError::from_auth(&e, &exec("aws")).unwrap();
        assert_eq!(
            p.to_string(),
            r#"exec credential plugin "aws" failed (exit status: 1): error: refresh token expired"#
        );
        assert!(ExecPluginError::from_auth(&AuthError::UnrefreshableTokenResponse, &exec("aws")).is_none());
    }
}
