//! The seam between [`super::cli::CephCli`] and where its calls run: a [`CephTransport`] gets a
//! finished argv and returns the exit code and output ([`Completed`]) or why it could not start
//! ([`StartError`]); streaming ([`StreamError`]) is optional.

use std::time::Duration;

use futures::future::BoxFuture;

/// The bulk reader's Python source (`bulk.py`, run by `super::bulk` as `python3 -c SCRIPT ARGS`):
/// the program of [`Tool::Python`].
pub const BULK_SCRIPT: &str = include_str!("bulk.py");

/// Which CLI a call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `rbd`
    Rbd,
    /// `ceph`
    Ceph,
    /// The bulk reader, `python3 -c <script>` (`super::bulk`): the prefix ends with the script,
    /// then the identity options.
    Python,
}

/// A finished call: exit code (-1 when there was none), stdout, stderr.
pub type Completed = (i32, String, String);

/// Why a transport could not run a call at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The process could not be started (the OS error, e.g. the binary is missing).
    #[error("{0}")]
    Spawn(String),
    /// Rook mode: no pod to run it in, or the exec API refused.
    #[error(transparent)]
    Rook(#[from] crate::model::ceph_error::RookError),
}

/// Why a streamed call ([`CephTransport::stream`]) did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// This transport cannot stream (only this machine's processes can).
    #[error("streaming is only supported with local Ceph access (ceph.mode = \"local\"), not {0}")]
    Unsupported(&'static str),
    /// The process could not be started.
    #[error("cannot start {bin}: {reason}")]
    Spawn {
        /// The binary.
        bin: String,
        /// The OS error, sanitized.
        reason: String,
    },
    /// No byte arrived for `secs` seconds; the process was killed.
    #[error("no data for {secs} s; killed (file left at {bytes} bytes)")]
    Stalled {
        /// Seconds without data.
        secs: u64,
        /// Bytes received before the stall.
        bytes: u64,
    },
    /// Reading the output or handing it to the sink failed.
    #[error("{0}")]
    Io(String),
    /// The process ended with a non-zero status; `stderr` is sanitized.
    #[error("exit {code}: {stderr}")]
    Exit {
        /// Exit code.
        code: i32,
        /// Standard error, sanitized.
        stderr: String,
    },
}

/// How a call's argv reaches a Ceph cluster. [`CephCli`] adds the timeouts, the concurrency bound
/// and the errors; a transport only runs what it is given.
pub trait CephTransport: Send + Sync {
    /// The words an argv for `tool` starts with: the binary and, locally, the identity options
    /// (`["rbd", "--conf", "/etc/ceph/ceph.conf"]`).
    fn prefix(&self, tool: Tool) -> Vec<String>;

    /// Runs `argv` to its end. `Err` says why it could not be started (binary missing, exec API
    /// refused, no toolbox or operator pod); the caller's timer bounds it.
    fn run<'a>(&'a self, argv: &'a [String]) -> BoxFuture<'a, Result<Completed, StartError>>;

    /// Where the calls run now, for the status bar (`rook toolbox rook-ceph/rook-ceph-tools-…`);
    /// `None` when there is nothing to say (this machine) or nothing chosen yet.
    fn via(&self) -> Option<String> {
        None
    }

    /// Runs `argv` and hands its stdout to `sink` chunk by chunk (up to 1 MiB each), killing it
    /// when no byte arrives for `stall`. Returns the bytes passed to the sink.
    fn stream<'a>(
        &'a self,
        argv: &'a [String],
        stall: Duration,
        sink: &'a mut (dyn FnMut(&[u8]) -> std::io::Result<()> + Send),
    ) -> BoxFuture<'a, Result<u64, StreamError>> {
        let _ = (argv, stall, sink);
        let name = self.name();
        Box::pin(async move { Err(StreamError::Unsupported(name)) })
    }

    /// What the transport is, for messages ("local", "Rook (exec …)", "the simulation").
    fn name(&self) -> &'static str;
}

/// Reads a process's stdout and stderr to their ends at once (so neither pipe fills while the other
/// is read); a missing stream reads as empty, and a read error ends that stream where it stopped.
/// Returns `(stdout, stderr)` bytes.
pub(crate) async fn read_both<O, E>(stdout: Option<O>, stderr: Option<E>) -> (Vec<u8>, Vec<u8>)
where
    O: tokio::io::AsyncRead + Unpin,
    E: tokio::io::AsyncRead + Unpin,
{
    use tokio::io::AsyncReadExt;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let read_out = async {
        if let Some(mut s) = stdout {
            let _ = s.read_to_end(&mut out).await;
        }
    };
    let read_err = async {
        if let Some(mut s) = stderr {
            let _ = s.read_to_end(&mut err).await;
        }
    };
    tokio::join!(read_out, read_err);
    (out, err)
}
