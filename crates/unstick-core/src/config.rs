//! Configuration: `config/default.toml` embedded in the binary, a user TOML file merged over it.
//!
//! The user file is checked against the defaults before merging: a key the defaults do not have, or
//! a value of another TOML type, is an error naming the key path and the file. Nothing panics.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Table, Value};

/// Names of the colour themes the console embeds (`themes/*.toml`; the console's `theme` module
/// checks that each has its file). `ui.theme` must be one of them.
pub const THEME_NAMES: &[&str] = &["default", "light", "high-contrast"];

/// The embedded defaults (`config/default.toml`).
pub const DEFAULT_TOML: &str = include_str!("../../../config/default.toml");

/// Whole configuration. Every section and key is documented in `config/default.toml`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Screen settings.
    pub ui: UiConfig,
    /// Kubernetes settings.
    pub kube: KubeConfig,
    /// Ceph access and timeouts.
    pub ceph: CephConfig,
    /// Diagnosis thresholds.
    pub diagnose: DiagnoseConfig,
    /// Guided remediation: journal location, Lease, timeouts.
    pub remedy: RemedyConfig,
    /// Session logs and their redaction.
    pub session: SessionConfig,
}

/// `[ui]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UiConfig {
    /// Theme name (`themes/<name>.toml`).
    pub theme: String,
    /// Show all pods at start instead of only troubled ones.
    pub show_all_pods: bool,
    /// Age recomputation period, seconds (1..=60).
    pub tick_seconds: u64,
}

/// `[kube]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KubeConfig {
    /// Namespace to watch by default; empty = all namespaces.
    pub namespace: String,
    /// How each watcher takes its initial list.
    pub initial_list: InitialList,
}

/// How a watcher takes its initial list of objects (`[kube] initial_list`).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum InitialList {
    /// A streaming list where the API server accepts it, pages where it refuses it (decided per
    /// kind by the refusal's status code, 400, 403 or 422, before any object arrived).
    #[default]
    Auto,
    /// A watch with `sendInitialEvents=true` (KEP-3157 WatchList: alpha 1.27, beta and on by
    /// default from 1.32): the objects arrive as watch events, ended by a bookmark; the server
    /// never holds a whole list in memory. Refused by servers without the feature.
    Streaming,
    /// A list in pages of 500, then a watch from its resourceVersion (every server version).
    Paginated,
}

/// How `rbd`/`ceph` are reached.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CephMode {
    /// Run the CLIs on this machine.
    Local,
    /// Exec into the Rook toolbox pod (else the operator pod) through the Kubernetes exec API.
    Rook,
}

/// `[ceph]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CephConfig {
    /// `local` or `rook`.
    pub mode: CephMode,
    /// Path or name of the `rbd` binary.
    pub rbd: String,
    /// Path or name of the `ceph` binary.
    pub ceph: String,
    /// The Python 3 that has Ceph's `rados` module, for `collect`'s bulk reader
    /// (`sources::ceph::bulk`); without it the CLIs read each image.
    pub python: String,
    /// Outer kill timer per call, seconds.
    pub timeout_seconds: u64,
    /// `--client_mount_timeout`, seconds.
    pub client_mount_timeout_seconds: u64,
    /// `--rados_mon_op_timeout`, seconds.
    pub rados_mon_op_timeout_seconds: u64,
    /// `--rados_osd_op_timeout`, seconds.
    pub rados_osd_op_timeout_seconds: u64,
    /// Concurrent CLI processes at most.
    pub max_concurrent: usize,
    /// Refresh period of the visible image, seconds.
    pub refresh_seconds: u64,
    /// Scan all RBD-backed images once after the first complete PV list.
    pub scan_on_start: bool,
    /// Namespace of the Rook toolbox.
    pub rook_namespace: String,
    /// Label selector of the Rook toolbox pod.
    pub rook_toolbox_selector: String,
}

/// `[diagnose]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DiagnoseConfig {
    /// Terminating shorter than this (seconds) is normal.
    pub terminating_grace_seconds: i64,
    /// ContainerCreating shorter than this (seconds) is normal.
    pub creating_grace_seconds: i64,
    /// A node NotReady for less than this (seconds) is not yet "lost".
    pub node_lost_grace_seconds: i64,
    /// A VolumeAttachment deleting for less than this (seconds) is a normal detach.
    pub va_deleting_grace_seconds: i64,
    /// Events last seen longer ago than this (seconds) are not evidence.
    pub event_max_age_seconds: i64,
    /// Minimum event count of an unmap-busy failure before it is a finding.
    pub unmap_busy_min_count: i32,
    /// Kill timer of each Kubernetes list call of `diagnose` / `collect`, seconds.
    pub list_timeout_seconds: u64,
    /// Operator rules tying Ceph client addresses to nodes, each `"<CIDR>=<node>"`
    /// (`"192.168.50.0/28=worker-1"`): the last proof of [`crate::attribution`].
    pub address_rules: Vec<String>,
    /// A Node annotation whose value lists the node's storage addresses (IPs or CIDRs, separated
    /// by commas or spaces); empty = none. Checked after the rules.
    pub node_address_annotation: String,
}

impl DiagnoseConfig {
    /// [`DiagnoseConfig::address_rules`] parsed, in order: `(network, node)`. Errors: the first
    /// rule that is not `<CIDR or IP>=<node>`, with why.
    pub fn parsed_address_rules(&self) -> Result<Vec<(ipnet::IpNet, String)>, String> {
        self.address_rules.iter().map(|r| parse_address_rule(r)).collect()
    }
}

/// One `"<CIDR>=<node>"` rule (a bare IP is its host network, `/32` or `/128`).
fn parse_address_rule(rule: &str) -> Result<(ipnet::IpNet, String), String> {
    let (net, node) = rule.split_once('=').ok_or_else(|| format!("{rule:?} is not <CIDR>=<node>"))?;
    let (net, node) = (net.trim(), node.trim());
    let net = net
        .parse::<ipnet::IpNet>()
        .or_else(|_| net.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{net:?} in {rule:?} is not a CIDR or IP address"))?;
    if node.is_empty() {
        return Err(format!("{rule:?} names no node"));
    }
    Ok((net.trunc(), node.to_string()))
}

/// `[remedy]`: guided remediation settings (documented in `config/default.toml`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RemedyConfig {
    /// Incident journal directory; empty = `$XDG_DATA_HOME/unstick/incidents`.
    pub journal_dir: String,
    /// Namespace of the per-volume `coordination.k8s.io/v1` Lease.
    pub lease_namespace: String,
    /// Lease duration, seconds.
    pub lease_duration_seconds: u64,
    /// Kill timer of each Kubernetes API call of a remediation step, seconds.
    pub api_timeout_seconds: u64,
    /// A confirmation older than this (seconds, console time) is journaled as such; the live state
    /// is read again before every write whatever its age.
    pub precheck_max_age_seconds: u64,
    /// Default Wait-step timeout, seconds.
    pub wait_timeout_seconds: u64,
    /// Wait-step poll period, seconds (Verify steps are read again as often).
    pub wait_poll_seconds: u64,
    /// How long a Verify step keeps reading its conditions before it fails, seconds of console
    /// time (simulated time in training).
    pub verify_timeout_seconds: u64,
    /// `rbd export` stall limit, seconds.
    pub export_stall_seconds: u64,
}

/// `[session]`: session logs (`docs/session-export.md`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SessionConfig {
    /// Session log directory; empty = `$XDG_STATE_HOME/unstick/sessions`.
    pub dir: String,
    /// Extra regexes (Rust `regex` syntax) whose matches are replaced by `[REDACTED]` in session
    /// logs and exports, on top of the built-in rules. Checked at load time.
    pub redact_patterns: Vec<String>,
}

/// A configuration error, always naming the file (or `<built-in defaults>`). Paths, keys and
/// messages are shown sanitized ([`crate::text::sanitize`]): they come from the user's file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {}: {error}", shown(path))]
    Read {
        /// The config file (or `<built-in defaults>`).
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// Not valid TOML.
    #[error("config file {} is not valid TOML: {message}", shown(path))]
    Syntax {
        /// The config file (or `<built-in defaults>`).
        path: PathBuf,
        /// The TOML parser's message.
        message: String,
    },
    /// A key the defaults do not have.
    #[error(
        "config file {}: unknown key `{}` (see config/default.toml for the keys)",
        shown(path),
        crate::text::sanitize(key)
    )]
    UnknownKey {
        /// The config file (or `<built-in defaults>`).
        path: PathBuf,
        /// The key path (`ceph.watch_timeout_seconds`).
        key: String,
    },
    /// A value of the wrong TOML type.
    #[error("config file {}: key `{}` must be {expected}, found {found}", shown(path), crate::text::sanitize(key))]
    WrongType {
        /// The config file (or `<built-in defaults>`).
        path: PathBuf,
        /// The key path (`ceph.watch_timeout_seconds`).
        key: String,
        /// The TOML type the key takes.
        expected: &'static str,
        /// The TOML type found.
        found: &'static str,
    },
    /// A value of the right type that is not allowed.
    #[error("config file {}: key `{}`: {}", shown(path), crate::text::sanitize(key), crate::text::sanitize(message))]
    BadValue {
        /// The config file (or `<built-in defaults>`).
        path: PathBuf,
        /// The key path (`ceph.watch_timeout_seconds`).
        key: String,
        /// Why the value is refused (with the allowed range).
        message: String,
    },
}

fn shown(p: &Path) -> String {
    crate::text::sanitize(&p.display().to_string())
}

/// A TOML value that did not deserialize: the key path (`ceph.mode`, `pod[2].age`; empty for
/// the document itself), the 1-based line and column when the source text is known, and
/// serde's message (sanitized: it may quote the file's text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlError {
    /// Dotted key path, `[i]` for array elements.
    pub key: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl TomlError {
    fn new(key: String, text: Option<&str>, span: Option<std::ops::Range<usize>>, message: &str) -> Self {
        let pos = text.zip(span).map(|(t, sp)| {
            let before = &t.as_bytes()[..sp.start.min(t.len())];
            let line = before.iter().filter(|b| **b == b'\n').count() + 1;
            let col = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
            (line, col)
        });
        TomlError {
            key: crate::text::sanitize(&key),
            line: pos.map(|p| p.0),
            column: pos.map(|p| p.1),
            message: crate::text::sanitize(message.trim()),
        }
    }

    /// `line L, column C: ` when the position is known, else empty.
    pub fn position(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("line {l}, column {c}: "),
            (Some(l), None) => format!("line {l}: "),
            _ => String::new(),
        }
    }
}

/// Deserializes `text` as TOML into `T`, tracking the key path of any error
/// (`serde_path_to_error`) so the message names the key, line and column.
pub fn toml_from_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, TomlError> {
    let de = toml::Deserializer::parse(text)
        .map_err(|e| TomlError::new(String::new(), Some(text), e.span(), e.message()))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let key = path_text(e.path());
        let inner = e.into_inner();
        TomlError::new(key, Some(text), inner.span(), inner.message())
    })
}

/// Deserializes an already merged TOML value, tracking the key path of any error.
fn toml_from_value<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, TomlError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let key = path_text(e.path());
        TomlError::new(key, None, None, e.inner().message())
    })
}

fn path_text(p: &serde_path_to_error::Path) -> String {
    match p.to_string().as_str() {
        "." => String::new(),
        s => s.to_string(),
    }
}

impl Config {
    /// The embedded defaults alone.
    #[allow(clippy::expect_used, reason = "the embedded defaults are a constant, loaded by the unit tests")]
    pub fn defaults() -> Self {
        Self::from_layers(None).expect("embedded config/default.toml is valid (tested)")
    }

    /// Loads the defaults and, if `user` is given and exists, merges it over them.
    /// A missing user file is not an error when `must_exist` is false (the XDG default path).
    pub fn load(user: Option<&Path>, must_exist: bool) -> Result<Self, ConfigError> {
        match user {
            Some(p) if p.exists() || must_exist => {
                let text =
                    std::fs::read_to_string(p).map_err(|error| ConfigError::Read { path: p.to_path_buf(), error })?;
                Self::from_layers(Some((p, &text)))
            }
            _ => Self::from_layers(None),
        }
    }

    /// Parses the defaults plus an optional user layer given as (file name, text).
    pub fn from_layers(user: Option<(&Path, &str)>) -> Result<Self, ConfigError> {
        let builtin = Path::new("<built-in defaults>");
        let mut base: Table = DEFAULT_TOML
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Syntax { path: builtin.into(), message: e.to_string() })?;
        let path = match user {
            Some((path, text)) => {
                let layer: Table = toml_from_str(text).map_err(|e| ConfigError::Syntax {
                    path: path.to_path_buf(),
                    message: format!("{}{}", e.position(), e.message),
                })?;
                merge(&mut base, layer, path, "")?;
                path
            }
            None => builtin,
        };
        let cfg: Config = toml_from_value(Value::Table(base)).map_err(|e| ConfigError::BadValue {
            path: path.into(),
            key: e.key,
            message: e.message,
        })?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let bad = |key: &str, message: &str| ConfigError::BadValue {
            path: path.into(),
            key: key.into(),
            message: message.into(),
        };
        if !(1..=60).contains(&self.ui.tick_seconds) {
            return Err(bad("ui.tick_seconds", "must be between 1 and 60"));
        }
        if !THEME_NAMES.contains(&self.ui.theme.as_str()) {
            return Err(bad("ui.theme", &format!("no theme named {:?} ({})", self.ui.theme, THEME_NAMES.join(", "))));
        }
        if let Err(e) = self.diagnose.parsed_address_rules() {
            return Err(bad("diagnose.address_rules", &e));
        }
        let c = &self.ceph;
        for (k, v) in [
            ("ceph.timeout_seconds", c.timeout_seconds),
            ("ceph.client_mount_timeout_seconds", c.client_mount_timeout_seconds),
            ("ceph.rados_mon_op_timeout_seconds", c.rados_mon_op_timeout_seconds),
            ("ceph.rados_osd_op_timeout_seconds", c.rados_osd_op_timeout_seconds),
            ("ceph.refresh_seconds", c.refresh_seconds),
        ] {
            if v == 0 || v > 3600 {
                return Err(bad(k, "must be between 1 and 3600 seconds"));
            }
        }
        if c.max_concurrent == 0 || c.max_concurrent > 64 {
            return Err(bad("ceph.max_concurrent", "must be between 1 and 64"));
        }
        let r = &self.remedy;
        for (k, v) in [
            ("remedy.lease_duration_seconds", r.lease_duration_seconds),
            ("remedy.api_timeout_seconds", r.api_timeout_seconds),
            ("remedy.precheck_max_age_seconds", r.precheck_max_age_seconds),
            ("remedy.wait_timeout_seconds", r.wait_timeout_seconds),
            ("remedy.wait_poll_seconds", r.wait_poll_seconds),
            ("remedy.verify_timeout_seconds", r.verify_timeout_seconds),
            ("remedy.export_stall_seconds", r.export_stall_seconds),
        ] {
            if v == 0 || v > 86_400 {
                return Err(bad(k, "must be between 1 and 86400 seconds"));
            }
        }
        if r.lease_namespace.is_empty() {
            return Err(bad("remedy.lease_namespace", "must not be empty"));
        }
        let d = &self.diagnose;
        for (k, v) in [
            ("diagnose.terminating_grace_seconds", d.terminating_grace_seconds),
            ("diagnose.creating_grace_seconds", d.creating_grace_seconds),
            ("diagnose.node_lost_grace_seconds", d.node_lost_grace_seconds),
            ("diagnose.va_deleting_grace_seconds", d.va_deleting_grace_seconds),
            ("diagnose.event_max_age_seconds", d.event_max_age_seconds),
        ] {
            if !(0..=30 * 86_400).contains(&v) {
                return Err(bad(k, "must be between 0 and 2592000 seconds (30 days)"));
            }
        }
        if !(1..=1_000_000).contains(&d.unmap_busy_min_count) {
            return Err(bad("diagnose.unmap_busy_min_count", "must be between 1 and 1000000"));
        }
        if d.list_timeout_seconds == 0 || d.list_timeout_seconds > 3600 {
            return Err(bad("diagnose.list_timeout_seconds", "must be between 1 and 3600 seconds"));
        }
        for (i, p) in self.session.redact_patterns.iter().enumerate() {
            // checked here with plain `regex`; `session::Redactor` compiles them for use
            if let Err(e) = regex::Regex::new(p) {
                return Err(bad(&format!("session.redact_patterns[{i}]"), &format!("`{p}` is not a valid regex: {e}")));
            }
        }
        Ok(())
    }

    /// The default user config path: `$XDG_CONFIG_HOME/unstick/config.toml`.
    pub fn default_path() -> Option<PathBuf> {
        crate::dirs::project().map(|d| d.config_dir().join("config.toml"))
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a datetime",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

fn merge(base: &mut Table, layer: Table, path: &Path, prefix: &str) -> Result<(), ConfigError> {
    for (k, v) in layer {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        let Some(slot) = base.get_mut(&k) else {
            return Err(ConfigError::UnknownKey { path: path.into(), key });
        };
        match (slot, v) {
            (Value::Table(b), Value::Table(l)) => merge(b, l, path, &key)?,
            (slot, v) if std::mem::discriminant(slot) == std::mem::discriminant(&v) => *slot = v,
            (slot, v) => {
                return Err(ConfigError::WrongType {
                    path: path.into(),
                    key,
                    expected: type_name(slot),
                    found: type_name(&v),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
