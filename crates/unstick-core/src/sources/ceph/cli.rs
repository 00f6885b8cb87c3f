//! Running `rbd` / `ceph` as argv (never a shell string), with Ceph's client timeouts on every call,
//! an outer kill timer, and a bound on concurrent processes. [`CephCli`] builds and bounds the calls;
//! a [`CephTransport`] carries them: this machine's processes ([`Access::Local`]), a Rook toolbox or
//! operator pod through the Kubernetes exec API ([`Access::Rook`], `sources::ceph::rook`), or anything else that implements the trait
//! (the training simulation does, in `sources::sim`; this module does not know it).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use jiff::Timestamp;
use tokio::io::AsyncReadExt;
use tokio::sync::Semaphore;

pub use super::rook::exit_code_of;
pub use super::transport::{CephTransport, Completed, StartError, StreamError, Tool};
use crate::clock::SharedClock;
use crate::config::{CephConfig, CephMode};
pub use crate::model::ceph_error::CephError;

/// Where the CLIs run and with which identity (from the configuration and the command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// On this machine. `conf` → `--conf`, `id` → `--id`, `keyring` → `--keyring`; unset ones are
    /// left to Ceph's defaults (`CEPH_CONF`, `/etc/ceph/ceph.conf`, `client.admin`).
    Local {
        /// Ceph config file (`--conf`).
        conf: Option<PathBuf>,
        /// Client id without `client.` (`--id`).
        id: Option<String>,
        /// Keyring file (`--keyring`).
        keyring: Option<PathBuf>,
    },
    /// Inside a pod of the Rook cluster in `namespace` (`sources::ceph::rook`): the first running
    /// toolbox pod matching `selector` (its own `/etc/ceph` config), else the operator pod with
    /// the cluster's config and keyring under `/var/lib/rook/<namespace>/`.
    Rook {
        /// Namespace of the toolbox pod (`rook-ceph`).
        namespace: String,
        /// Label selector of the toolbox pod (`app=rook-ceph-tools`).
        selector: String,
    },
}

/// The result of a successful call: stdout (stderr is kept for status messages).
#[derive(Debug, Clone)]
pub struct Output {
    /// Raw stdout.
    pub stdout: String,
    /// Raw stderr (`ceph` prints its status messages there).
    pub stderr: String,
    /// Wall time of the call.
    pub elapsed: Duration,
}

/// Runs Ceph CLIs. Cheap to clone; clones share the concurrency limit.
#[derive(Clone)]
pub struct CephCli {
    transport: Arc<dyn CephTransport>,
    cfg: CephConfig,
    limit: Arc<Semaphore>,
    clock: SharedClock,
}

impl CephCli {
    /// A runner for `access` with the timeouts and limits in `cfg`. Rook access needs `kube`
    /// (without it every call fails to start, saying so).
    pub fn new(access: Access, cfg: CephConfig, kube: Option<kube::Client>) -> Self {
        let transport: Arc<dyn CephTransport> = match access {
            Access::Local { conf, id, keyring } => {
                let identity = identity(conf, id, keyring);
                Arc::new(Local { rbd: cfg.rbd.clone(), ceph: cfg.ceph.clone(), python: cfg.python.clone(), identity })
            }
            Access::Rook { namespace, selector } => {
                Arc::new(super::rook::Rook::new(kube, namespace, selector, cfg.python.clone()))
            }
        };
        Self::with_transport(transport, cfg)
    }

    /// A runner whose calls go through `transport` (e.g. the training simulation).
    pub fn with_transport(transport: Arc<dyn CephTransport>, cfg: CephConfig) -> Self {
        let limit = Arc::new(Semaphore::new(cfg.max_concurrent.max(1)));
        Self { transport, cfg, limit, clock: crate::clock::wall() }
    }

    /// The same runner stamping its observations with `clock` (the wall clock by default; the
    /// training simulation's clock in training).
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// Now on this runner's clock: the time its observations are stamped with.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The transport's name, for messages.
    pub fn transport_name(&self) -> &'static str {
        self.transport.name()
    }

    /// Where the calls run now ([`CephTransport::via`]): the Rook pod chosen, `None` locally.
    pub fn via(&self) -> Option<String> {
        self.transport.via()
    }

    /// Builds the full argv for `tool args...`: binary, identity options (local mode), the client
    /// timeouts, then `args`, then `--format json`.
    ///
    /// `rbd status replicapool/img` → `["rbd", "--conf", "/etc/ceph/ceph.conf",
    /// "--client_mount_timeout", "5", "--rados_mon_op_timeout", "10", "--rados_osd_op_timeout",
    /// "10", "status", "replicapool/img", "--format", "json"]`.
    pub fn argv(&self, tool: Tool, args: &[&str]) -> Vec<String> {
        let mut v = self.transport.prefix(tool);
        for (flag, secs) in [
            ("--client_mount_timeout", self.cfg.client_mount_timeout_seconds),
            ("--rados_mon_op_timeout", self.cfg.rados_mon_op_timeout_seconds),
            ("--rados_osd_op_timeout", self.cfg.rados_osd_op_timeout_seconds),
        ] {
            v.extend([flag.to_string(), secs.to_string()]);
        }
        v.extend(args.iter().map(|a| a.to_string()));
        v.extend(["--format".into(), "json".into()]);
        v
    }

    /// Runs `tool args... --format json` and returns its output on exit status 0.
    ///
    /// Waits for a concurrency slot first; the outer timer (`ceph.timeout_seconds`) starts when the
    /// process starts, and kills it on expiry (`kill_on_drop`).
    pub async fn run(&self, tool: Tool, args: &[&str]) -> Result<Output, CephError> {
        self.run_argv(self.argv(tool, args)).await
    }

    /// Like [`CephCli::argv`] but without the trailing `--format json`: for `rbd` subcommands that
    /// reject it (`lock rm`, `snap create`, `export`: "rbd: unrecognised option '--format'").
    pub fn argv_plain(&self, tool: Tool, args: &[&str]) -> Vec<String> {
        let mut v = self.argv(tool, args);
        v.truncate(v.len().saturating_sub(2));
        v
    }

    /// Runs `tool args...` without `--format json` (see [`CephCli::argv_plain`]), with the same
    /// timeouts, concurrency limit and errors as [`CephCli::run`].
    pub async fn run_plain(&self, tool: Tool, args: &[&str]) -> Result<Output, CephError> {
        self.run_argv(self.argv_plain(tool, args)).await
    }

    /// Runs `tool args...` (plain, see [`CephCli::argv_plain`]) and hands its stdout to `sink` as it
    /// arrives; killed when no byte arrives for `stall` (no overall timer: an export takes as long
    /// as the image needs). Holds a concurrency slot while it runs. Returns the bytes streamed.
    pub async fn stream(
        &self,
        tool: Tool,
        args: &[&str],
        stall: Duration,
        sink: &mut (dyn FnMut(&[u8]) -> std::io::Result<()> + Send),
    ) -> Result<u64, StreamError> {
        let argv = self.argv_plain(tool, args);
        let _permit = self.limit.acquire().await.map_err(|_| StreamError::Io("runner shut down".into()))?;
        self.transport.stream(&argv, stall, sink).await
    }

    async fn run_argv(&self, argv: Vec<String>) -> Result<Output, CephError> {
        self.run_argv_within(argv, self.cfg.timeout_seconds).await
    }

    /// [`CephCli::run_plain`] with an outer timer of `secs` instead of `ceph.timeout_seconds`.
    pub async fn run_plain_within(&self, tool: Tool, args: &[&str], secs: u64) -> Result<Output, CephError> {
        self.run_argv_within(self.argv_plain(tool, args), secs).await
    }

    /// [`CephCli::run_parsed`] with an outer timer of `secs` instead of `ceph.timeout_seconds`:
    /// for a bulk read whose time grows with what it reads (`rbd ls -l` opens every image of
    /// the pool: 27 s for 2,000 images on a loaded 2-core machine).
    pub async fn run_parsed_within<T, E: std::fmt::Display>(
        &self,
        tool: Tool,
        args: &[&str],
        secs: u64,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, CephError> {
        let out = self.run_argv_within(self.argv(tool, args), secs).await?;
        parse(&out.stdout)
            .map_err(|e| CephError::Parse { cmd: display_argv(&self.argv(tool, args)), reason: e.to_string() })
    }

    async fn run_argv_within(&self, argv: Vec<String>, secs: u64) -> Result<Output, CephError> {
        let cmd = display_argv(&argv);
        let _permit = self
            .limit
            .acquire()
            .await
            .map_err(|_| CephError::Spawn { cmd: cmd.clone(), reason: "runner shut down".into() })?;
        let started = Instant::now();
        let fut = self.transport.run(&argv);
        let (code, stdout, stderr) = match tokio::time::timeout(Duration::from_secs(secs), fut).await {
            Err(_) => return Err(CephError::Timeout { cmd, secs }),
            Ok(Err(StartError::Spawn(reason))) => return Err(CephError::Spawn { cmd, reason }),
            Ok(Err(StartError::Rook(error))) => return Err(CephError::Rook { cmd, error: Box::new(error) }),
            Ok(Ok(r)) => r,
        };
        tracing::debug!(%cmd, code, elapsed_ms = started.elapsed().as_millis() as u64, "ceph call");
        if code != 0 {
            let stderr = crate::text::sanitize(stderr.trim());
            return Err(CephError::Exit { cmd, code, stderr });
        }
        Ok(Output { stdout, stderr, elapsed: started.elapsed() })
    }

    /// Runs a call and parses its stdout with `parse`; parse failures become [`CephError::Parse`].
    pub async fn run_parsed<T, E: std::fmt::Display>(
        &self,
        tool: Tool,
        args: &[&str],
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, CephError> {
        self.run_parsed_within(tool, args, self.cfg.timeout_seconds, parse).await
    }

    /// The outer timeout of a bulk read over `items` images: `ceph.timeout_seconds` plus 50 ms an
    /// image (2,000 images: 110 s with the default 10 s).
    pub fn bulk_timeout(&self, items: usize) -> u64 {
        self.cfg.timeout_seconds + items as u64 / 20
    }
}

/// Quotes an argv for display only (never executed), the way a POSIX shell would read it back
/// (`shlex`); a word with a NUL byte (which no argv can carry) is shown as `<NUL>`, and a word of
/// several lines after `-c` (the bulk reader's script) as `'<script of N lines>'`.
pub fn display_argv(argv: &[String]) -> String {
    let after_c = std::iter::once(false).chain(argv.iter().map(|a| a == "-c"));
    argv.iter()
        .zip(after_c)
        .map(|(a, after_c)| match shlex::try_quote(a) {
            _ if after_c && a.lines().nth(1).is_some() => format!("'<script of {} lines>'", a.lines().count()),
            Ok(q) => q.into_owned(),
            Err(_) => a.replace('\0', "<NUL>"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn identity(conf: Option<PathBuf>, id: Option<String>, keyring: Option<PathBuf>) -> Vec<String> {
    let mut v = vec![];
    if let Some(c) = conf {
        v.extend(["--conf".into(), c.display().to_string()]);
    }
    if let Some(i) = id {
        v.extend(["--id".into(), i]);
    }
    if let Some(k) = keyring {
        v.extend(["--keyring".into(), k.display().to_string()]);
    }
    v
}

/// This machine's `rbd` / `ceph` processes.
struct Local {
    rbd: String,
    ceph: String,
    python: String,
    identity: Vec<String>,
}

impl Local {
    fn spawn(argv: &[String]) -> std::io::Result<tokio::process::Child> {
        tokio::process::Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
    }
}

impl CephTransport for Local {
    fn prefix(&self, tool: Tool) -> Vec<String> {
        let head = match tool {
            Tool::Rbd => vec![self.rbd.clone()],
            Tool::Ceph => vec![self.ceph.clone()],
            Tool::Python => vec![self.python.clone(), "-c".into(), super::transport::BULK_SCRIPT.into()],
        };
        head.into_iter().chain(self.identity.iter().cloned()).collect()
    }

    fn run<'a>(&'a self, argv: &'a [String]) -> BoxFuture<'a, Result<Completed, StartError>> {
        Box::pin(async move {
            let mut child = Self::spawn(argv).map_err(|e| StartError::Spawn(e.to_string()))?;
            let (out, err) = super::transport::read_both(child.stdout.take(), child.stderr.take()).await;
            let status = child.wait().await.map_err(|e| StartError::Spawn(e.to_string()))?;
            let code = status.code().unwrap_or(-1);
            Ok((code, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned()))
        })
    }

    fn stream<'a>(
        &'a self,
        argv: &'a [String],
        stall: Duration,
        sink: &'a mut (dyn FnMut(&[u8]) -> std::io::Result<()> + Send),
    ) -> BoxFuture<'a, Result<u64, StreamError>> {
        Box::pin(async move {
            let mut child =
                Self::spawn(argv).map_err(|e| StreamError::Spawn { bin: argv[0].clone(), reason: e.to_string() })?;
            let mut stdout = child.stdout.take().ok_or_else(|| StreamError::Io("no stdout".into()))?;
            let mut stderr = child.stderr.take().ok_or_else(|| StreamError::Io("no stderr".into()))?;
            let err_task = tokio::spawn(async move {
                let mut s = Vec::new();
                let _ = stderr.read_to_end(&mut s).await;
                String::from_utf8_lossy(&s).into_owned()
            });
            let mut bytes = 0u64;
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = match tokio::time::timeout(stall, stdout.read(&mut buf)).await {
                    Err(_) => {
                        let _ = child.kill().await;
                        return Err(StreamError::Stalled { secs: stall.as_secs(), bytes });
                    }
                    Ok(Err(e)) => return Err(StreamError::Io(format!("reading {} output: {e}", argv[0]))),
                    Ok(Ok(0)) => break,
                    Ok(Ok(n)) => n,
                };
                sink(&buf[..n]).map_err(|e| StreamError::Io(e.to_string()))?;
                bytes += n as u64;
            }
            let status = match tokio::time::timeout(stall, child.wait()).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => return Err(StreamError::Io(e.to_string())),
                Err(_) => return Err(StreamError::Io(format!("{} did not exit after closing its output", argv[0]))),
            };
            let stderr = err_task.await.unwrap_or_default();
            if !status.success() {
                let stderr = crate::text::sanitize(stderr.trim());
                return Err(StreamError::Exit { code: status.code().unwrap_or(-1), stderr });
            }
            Ok(bytes)
        })
    }

    fn name(&self) -> &'static str {
        "local"
    }
}

impl CephConfig {
    /// The access described by this config plus command-line overrides.
    pub fn access(&self, conf: Option<PathBuf>, id: Option<String>, keyring: Option<PathBuf>) -> Access {
        match self.mode {
            CephMode::Local => Access::Local { conf, id, keyring },
            CephMode::Rook => {
                Access::Rook { namespace: self.rook_namespace.clone(), selector: self.rook_toolbox_selector.clone() }
            }
        }
    }
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
