//! Why a Ceph read has no value, typed from the CLI runner to the screen: [`CephError`] (one
//! command failed) and [`CephReadError`] (what the model keeps in place of watchers, locks or the
//! blocklist). Their `Display` is the text the Ceph pane, the evidence and the findings show.

/// A failed call. Its `Display` names the command, so it can be shown as is in the Ceph pane.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CephError {
    /// The outer kill timer fired; the process was killed.
    #[error("`{cmd}` timed out after {secs} s (killed)")]
    Timeout {
        /// The command as shown (argv joined).
        cmd: String,
        /// The timeout, seconds.
        secs: u64,
    },
    /// Non-zero exit. `code` is the errno for `rbd` (2 ENOENT, 16 EBUSY, 110 ETIMEDOUT, ...).
    #[error("`{cmd}` exited {code}: {stderr}")]
    Exit {
        /// The command as shown (argv joined).
        cmd: String,
        /// Exit code.
        code: i32,
        /// Standard error, sanitized.
        stderr: String,
    },
    /// The process could not be started (binary missing, exec API refused, no toolbox pod).
    #[error("`{cmd}` could not be started: {reason}")]
    Spawn {
        /// The command as shown (argv joined).
        cmd: String,
        /// Why it could not start.
        reason: String,
    },
    /// Rook mode could not run it: no toolbox or operator pod, or the exec API refused.
    #[error("`{cmd}` could not be started: {error}")]
    Rook {
        /// The command as shown (argv joined, without the pod's identity options).
        cmd: String,
        /// Why (boxed: it is rare, and every `CephError` would otherwise be this big).
        error: Box<RookError>,
    },
    /// The output was not what the parser expected.
    #[error("`{cmd}` printed unexpected output: {reason}")]
    Parse {
        /// The command as shown (argv joined).
        cmd: String,
        /// What was wrong with the output.
        reason: String,
    },
}

impl CephError {
    /// True when the cluster gave no usable answer: a timeout, a process that could not start, or
    /// a failure exit other than missing rights ([`CephError::is_permission`]) or a missing image
    /// (ENOENT, 2). Output that does not parse was an answer.
    pub fn is_unanswered(&self) -> bool {
        match self {
            CephError::Timeout { .. } | CephError::Spawn { .. } | CephError::Rook { .. } => true,
            CephError::Exit { code, .. } => *code != 2 && !self.is_permission(),
            CephError::Parse { .. } => false,
        }
    }

    /// True for "permission denied" answers (EACCES 13 / EPERM 1 from `ceph`, `rbd`).
    pub fn is_permission(&self) -> bool {
        matches!(self, CephError::Exit { code: 1 | 13, stderr, .. }
            if stderr.contains("EACCES") || stderr.contains("Operation not permitted")
                || stderr.contains("access denied") || stderr.contains("problem getting command descriptions"))
    }
}

/// Why Rook mode could not run a command in a pod (`sources::ceph::rook`). Each `Display` is one
/// line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RookError {
    /// Neither a running toolbox pod nor a running operator pod in the namespace.
    #[error("no running Rook toolbox ({toolbox}) or operator ({operator}) pod in namespace {namespace}")]
    NoPod {
        /// The namespace searched (`rook-ceph`).
        namespace: String,
        /// The toolbox's label selector (`app=rook-ceph-tools`).
        toolbox: String,
        /// The operator's label selector (`app=rook-ceph-operator`).
        operator: String,
    },
    /// Listing the pods failed (API server unreachable, no right to list pods).
    #[error("listing pods ({selector}) in namespace {namespace}: {reason}")]
    List {
        /// The namespace.
        namespace: String,
        /// The label selector.
        selector: String,
        /// The API error, sanitized.
        reason: String,
    },
    /// The exec API refused or broke the call (pod gone, no `pods/exec` right, kubelet unreachable).
    #[error("exec into {namespace}/{pod}: {reason}")]
    Exec {
        /// The pod's namespace.
        namespace: String,
        /// The pod.
        pod: String,
        /// The API error, sanitized.
        reason: String,
    },
    /// Rook mode was set up without a Kubernetes client.
    #[error("no Kubernetes client for Rook mode")]
    NoClient,
}

/// Why a Ceph read (watchers, locks, blocklist) holds no value: kept in the model in place of the
/// data and shown with its `Display`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CephReadError {
    /// The command failed.
    #[error(transparent)]
    Failed(#[from] CephError),
    /// A scan's fast path got no answer, so the images were not read one by one either.
    #[error("scan stopped: {0}")]
    ScanStopped(CephError),
    /// A per-image scan stopped after this many images in a row got no answer.
    #[error("scan stopped: {images} images in a row got no answer: {last}")]
    ScanUnanswered {
        /// Images in a row without an answer.
        images: usize,
        /// The last image's failure.
        last: CephError,
    },
    /// A per-image scan's deadline passed before the image was read.
    #[error("not read: the scan's deadline ({minutes} min) passed")]
    ScanDeadline {
        /// The deadline, minutes.
        minutes: u64,
    },
    /// The image is not in its pool's `rbd ls -l` listing.
    #[error("image {image} not found in `rbd ls -l {pool}`")]
    NotListed {
        /// The image spec (`pool/image`).
        image: String,
        /// The pool spec listed (`pool` or `pool/namespace`).
        pool: String,
    },
    /// Read from a bundle that does not hold the file.
    #[error("{file} is not in the bundle")]
    NotInBundle {
        /// The file's path inside the bundle (`ceph/images/<pool>/<image>/status.json`).
        file: String,
    },
}
