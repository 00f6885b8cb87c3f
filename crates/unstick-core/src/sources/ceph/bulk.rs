//! The bulk reader: every image's locks (what `rbd lock ls --format json` prints) and metadata
//! (what `rbd image-meta list --format json` prints) in ONE client process, the embedded
//! `bulk.py` run as `python3 -c <script> ARGS` (argv, through the runner's transport: this machine
//! or the Rook pod, with the same identity options and Ceph client timeouts as the CLIs). It uses
//! the python3 `rados` binding that ships beside the `rbd` CLI (Debian's and RHEL's `ceph-common`
//! depend on python3-rados / python3-rbd; quay.io/ceph/ceph has them) and reads each image's
//! header object directly (the `rbd_lock` cls lock's lockers, the `metadata_` omap keys: the
//! RBD on-disk format librbd reads), so no image is opened. 2,000 images: 1.2–2.6 s and about
//! 0.8 CPU-s on the 2-core harness machine, against 14 s for `rbd ls -l` and 0.1 CPU-s a process
//! for each `rbd lock ls`.
//!
//! The script prints one JSON object a line, flushed as it goes (the format is in `bulk.py`'s
//! header); [`parse_line`] reads one line into a [`BulkLine`]. When the script cannot run here
//! ([`BulkUnavailable`], decided from the exit status by [`decide`]), the scan falls back to the
//! CLI path and says so ([`CephReader::Cli`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::cli::{CephCli, CephError, Output, Tool};
use crate::model::ImageRef;
use crate::model::ceph::Lock;

pub use super::transport::BULK_SCRIPT as SCRIPT;
/// Threads the script reads images with (librados releases the GIL; 16 read 2,000 images in
/// 1.2 s where 8 took 2.6 s on the loaded harness machine).
pub const THREADS: usize = 16;
/// The script's exit status when `import rados, rbd` fails.
pub const EXIT_NO_MODULE: i32 = 3;
/// The script's exit status when it cannot connect to the cluster (reason on stderr).
pub const EXIT_CONNECT: i32 = 5;

/// Which reader produced a scan's locks and metadata: `manifest.json` `ceph.reader`, e.g.
/// `{"kind": "bulk", "librados": "3.0.0", "python": "3.11.2"}` or
/// `{"kind": "cli", "bulk_unavailable": "the Python rados/rbd modules are missing: …"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CephReader {
    /// The bulk reader (this module): one process read every image's header object.
    Bulk {
        /// librados version `major.minor.extra` as the binding reports it.
        librados: String,
        /// The Python version that ran it.
        python: String,
    },
    /// The `rbd` CLI, one `rbd lock ls` / `rbd image-meta list` per image with clients.
    Cli {
        /// Why the bulk reader was not used (`None`: it was not asked for).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bulk_unavailable: Option<String>,
    },
}

/// Why the bulk reader cannot run where the calls run (the CLI path is used instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BulkUnavailable {
    /// The interpreter could not be started (missing binary: spawn error, or exit 126/127 from
    /// the pod's runtime).
    #[error("no Python interpreter to run the bulk reader: {reason}")]
    NoInterpreter {
        /// The OS's or the runtime's words.
        reason: String,
    },
    /// `import rados, rbd` failed ([`EXIT_NO_MODULE`]).
    #[error("the Python rados/rbd modules are missing: {stderr}")]
    NoModule {
        /// The script's stderr, sanitized.
        stderr: String,
    },
    /// Any other failure of the script itself (an old Python, a crash): not a Ceph answer.
    #[error("the bulk reader failed (exit {code}): {stderr}")]
    Broken {
        /// Exit status (-1 when there was none).
        code: i32,
        /// Its stderr, sanitized.
        stderr: String,
    },
}

/// Why a bulk read gave nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BulkError {
    /// It cannot run here: use the CLI path.
    Unavailable(BulkUnavailable),
    /// It ran and Ceph did not answer (could not connect, the outer timer, no Rook pod): the CLI
    /// path would not get an answer either.
    Failed(CephError),
}

/// What to make of the script's run: its output, or [`BulkError`]. Decided from the error's
/// kind and exit status only (see [`EXIT_NO_MODULE`], [`EXIT_CONNECT`]), never its wording.
pub fn decide(result: Result<Output, CephError>) -> Result<Output, BulkError> {
    use BulkUnavailable as U;
    match result {
        Ok(out) => Ok(out),
        Err(CephError::Spawn { reason, .. }) => Err(BulkError::Unavailable(U::NoInterpreter { reason })),
        Err(CephError::Exit { code: EXIT_NO_MODULE, stderr, .. }) => {
            Err(BulkError::Unavailable(U::NoModule { stderr }))
        }
        Err(CephError::Exit { code: 126 | 127, stderr, .. }) => {
            Err(BulkError::Unavailable(U::NoInterpreter { reason: stderr }))
        }
        Err(e @ CephError::Exit { code: EXIT_CONNECT, .. }) => Err(BulkError::Failed(e)),
        Err(CephError::Exit { code, stderr, .. }) => Err(BulkError::Unavailable(U::Broken { code, stderr })),
        Err(CephError::Parse { reason, .. }) => Err(BulkError::Unavailable(U::Broken { code: 0, stderr: reason })),
        Err(e @ (CephError::Timeout { .. } | CephError::Rook { .. })) => Err(BulkError::Failed(e)),
    }
}

/// One line of the script's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BulkLine {
    /// The first line: versions.
    Reader {
        /// librados `major.minor.extra`.
        librados: String,
        /// Python version.
        python: String,
    },
    /// A pool (or `pool/namespace`) listed, with its image count, or why it could not be.
    Pool {
        /// Pool and RADOS namespace (the namespace empty for the default one).
        pool: (String, String),
        /// Images listed, or the error (errno and message).
        listed: Result<usize, ImageError>,
    },
    /// One image.
    Image(BulkImage),
    /// The last line; `deadline`: the script's deadline passed, the images not printed were not
    /// read.
    End {
        /// True when it stopped at its deadline.
        deadline: bool,
    },
}

/// One image's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkImage {
    /// The image.
    pub image: ImageRef,
    /// Its id (`rbd_header.<id>` is its header object; empty for an old format-1 image).
    pub id: String,
    /// Its locks and metadata, or why not.
    pub read: Result<(Vec<Lock>, BTreeMap<String, String>), ImageError>,
}

/// Why one image's (or pool's) line holds no facts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// Ceph answered with an error (errno as `rbd` exits with it: 2 ENOENT, 110 ETIMEDOUT, ...).
    #[error("errno {errno}: {message}")]
    Ceph {
        /// The errno.
        errno: i32,
        /// The message, sanitized.
        message: String,
    },
    /// The line named the image but its facts were not in the expected shape.
    #[error("unexpected shape: {0}")]
    Shape(String),
}

/// A line that names no image and is none of the other kinds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// Not a JSON object.
    #[error("not a JSON object: {0}")]
    NotJson(String),
    /// A JSON object of a kind this version does not know, or one missing its fields.
    #[error("unexpected line: {0}")]
    Unexpected(String),
}

#[derive(Deserialize)]
struct Facts {
    lockers: Vec<Lock>,
    meta: BTreeMap<String, String>,
}

/// The error of a line carrying `errno` / `message`, if it does.
fn line_error(v: &Value) -> Option<ImageError> {
    let errno = v.get("errno")?.as_i64().and_then(|n| i32::try_from(n).ok()).unwrap_or(-1);
    let message = v.get("message").and_then(Value::as_str).unwrap_or_default();
    Some(ImageError::Ceph { errno, message: crate::text::sanitize(message) })
}

fn str_field<'a>(v: &'a Value, key: &str) -> Result<&'a str, LineError> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| LineError::Unexpected(format!("no string \"{key}\"")))
}

/// Parses one line of the script's output. An image line whose facts are malformed is still
/// that image's line ([`ImageError::Shape`]); a line naming no image is a [`LineError`].
pub fn parse_line(line: &str) -> Result<BulkLine, LineError> {
    let v: Value = serde_json::from_str(line).map_err(|e| LineError::NotJson(e.to_string()))?;
    let kind = v.as_object().and_then(|o| o.get("kind")).and_then(Value::as_str);
    let kind = kind.ok_or_else(|| LineError::Unexpected("no \"kind\"".into()))?;
    match kind {
        "reader" => {
            let librados = v.get("librados").and_then(Value::as_array).map(|a| {
                a.iter().map(|n| n.as_u64().map_or_else(|| "?".into(), |n| n.to_string())).collect::<Vec<_>>().join(".")
            });
            let librados = librados.ok_or_else(|| LineError::Unexpected("no \"librados\" list".into()))?;
            Ok(BulkLine::Reader { librados, python: crate::text::sanitize(str_field(&v, "python")?) })
        }
        "pool" => {
            let pool = (str_field(&v, "pool")?.to_string(), str_field(&v, "namespace")?.to_string());
            let listed = match (line_error(&v), v.get("images").and_then(Value::as_u64)) {
                (Some(e), _) => Err(e),
                (None, Some(n)) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
                (None, None) => return Err(LineError::Unexpected("a pool line without images or errno".into())),
            };
            Ok(BulkLine::Pool { pool, listed })
        }
        "image" => {
            let image = ImageRef {
                pool: str_field(&v, "pool")?.to_string(),
                namespace: str_field(&v, "namespace")?.to_string(),
                image: str_field(&v, "name")?.to_string(),
            };
            let id = v.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
            let read = match line_error(&v) {
                Some(e) => Err(e),
                None => serde_json::from_value::<Facts>(v)
                    .map(|f| (f.lockers, f.meta))
                    .map_err(|e| ImageError::Shape(e.to_string())),
            };
            Ok(BulkLine::Image(BulkImage { image, id, read }))
        }
        "end" => Ok(BulkLine::End { deadline: v.get("stopped").and_then(Value::as_str) == Some("deadline") }),
        other => Err(LineError::Unexpected(format!("kind {:?}", crate::text::sanitize(other)))),
    }
}

/// What one run of the script read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkRead {
    /// librados and Python versions (`None` when the first line was missing).
    pub versions: Option<(String, String)>,
    /// Each pool's listing: image count or error.
    pub pools: BTreeMap<(String, String), Result<usize, ImageError>>,
    /// Each image's line.
    pub images: Vec<BulkImage>,
    /// Lines that were not understood, and the first one's error.
    pub bad_lines: (usize, Option<LineError>),
    /// Whether the end line came, and whether it said the deadline passed.
    pub end: Option<bool>,
    /// The script's deadline, seconds.
    pub deadline_secs: u64,
}

impl BulkRead {
    /// Reads the script's whole stdout.
    pub fn from_output(stdout: &str, deadline_secs: u64) -> Self {
        let mut r = BulkRead { deadline_secs, ..Default::default() };
        for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
            match parse_line(line) {
                Ok(BulkLine::Reader { librados, python }) => r.versions = Some((librados, python)),
                Ok(BulkLine::Pool { pool, listed }) => {
                    r.pools.insert(pool, listed);
                }
                Ok(BulkLine::Image(i)) => r.images.push(i),
                Ok(BulkLine::End { deadline }) => r.end = Some(deadline),
                Err(e) => {
                    r.bad_lines.0 += 1;
                    r.bad_lines.1.get_or_insert(e);
                }
            }
        }
        r
    }

    /// The reader, for the manifest.
    pub fn reader(&self) -> CephReader {
        let (librados, python) = self.versions.clone().unwrap_or_else(|| ("?".into(), "?".into()));
        CephReader::Bulk { librados, python }
    }
}

/// Runs the script over `pools` (`pool` or `pool/namespace`), `expected` images in all (the
/// outer timer is [`CephCli::bulk_timeout`] of it; the script stops reading at three quarters of
/// that and says so, so the images read are kept). Errors: [`BulkError`], from [`decide`].
pub async fn read(cli: &CephCli, pools: &[String], expected: usize) -> Result<BulkRead, BulkError> {
    let secs = cli.bulk_timeout(expected);
    let deadline = (secs * 3 / 4).max(1);
    let (threads, deadline_arg) = (THREADS.to_string(), deadline.to_string());
    let mut args = vec!["--threads", threads.as_str(), "--deadline", deadline_arg.as_str()];
    args.extend(pools.iter().map(String::as_str));
    let out = decide(cli.run_plain_within(Tool::Python, &args, secs).await)?;
    Ok(BulkRead::from_output(&out.stdout, deadline))
}

#[cfg(test)]
#[path = "bulk_tests.rs"]
mod tests;
