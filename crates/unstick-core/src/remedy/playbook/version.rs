//! The Kubernetes API server's version, read live (`GET /version`) and carried to the playbook
//! builder as data ([`crate::remedy::playbook::target::Target::server_version`]), so the builder can pick the fix
//! the cluster will actually act on. The out-of-service taint (non-graceful node shutdown,
//! KEP-2268) is acted on by default from 1.26 (beta; GA in 1.28); in 1.24–1.25 only when
//! kube-controller-manager runs with the alpha feature gate `NodeOutOfServiceVolumeDetach`; before
//! 1.24 no controller reacts to it.

use std::time::Duration;

/// `major.minor` of the API server, from `/version` (`{"major":"1","minor":"20",...}`; managed
/// clusters print minors like `"27+"`, the suffix is ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ServerVersion {
    /// Major version (`1`).
    pub major: u32,
    /// Minor version (`20`).
    pub minor: u32,
}

/// The first minor version whose controllers act on `node.kubernetes.io/out-of-service` by default
/// (1.26, beta and on by default; GA in 1.28).
pub const OUT_OF_SERVICE_BETA: ServerVersion = ServerVersion { major: 1, minor: 26 };

/// The first minor version with the out-of-service taint behind the alpha feature gate
/// `NodeOutOfServiceVolumeDetach` (1.24).
pub const OUT_OF_SERVICE_ALPHA: ServerVersion = ServerVersion { major: 1, minor: 24 };

/// The feature gate the out-of-service taint needs on 1.24–1.25, as the operator types it.
pub const OUT_OF_SERVICE_GATE: &str = "NodeOutOfServiceVolumeDetach";

/// Whether the controllers of a version act on the out-of-service taint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfService {
    /// Before 1.24: nothing acts on it.
    Absent,
    /// 1.24–1.25: only with the alpha feature gate [`OUT_OF_SERVICE_GATE`] on.
    BehindGate,
    /// 1.26 and later: on by default.
    OnByDefault,
}

impl ServerVersion {
    /// Parses the `major` and `minor` strings of `/version`. Trailing non-digits (`27+`) are
    /// ignored; `None` when either has no leading digits.
    pub fn parse(major: &str, minor: &str) -> Option<Self> {
        let num = |s: &str| -> Option<u32> {
            let d: String = s.trim().chars().take_while(|c| c.is_ascii_digit()).collect();
            d.parse().ok()
        };
        Some(ServerVersion { major: num(major)?, minor: num(minor)? })
    }

    /// From kube's `/version` answer; falls back to `gitVersion` (`v1.20.2`) when `major`/`minor`
    /// are empty (some distributions leave them out).
    pub fn from_info(info: &k8s_openapi::apimachinery::pkg::version::Info) -> Option<Self> {
        Self::parse(&info.major, &info.minor).or_else(|| {
            let v = info.git_version.trim_start_matches('v');
            let mut it = v.split('.');
            Self::parse(it.next()?, it.next()?)
        })
    }

    /// Whether this version's controllers act on the out-of-service taint.
    pub fn out_of_service(&self) -> OutOfService {
        if *self >= OUT_OF_SERVICE_BETA {
            OutOfService::OnByDefault
        } else if *self >= OUT_OF_SERVICE_ALPHA {
            OutOfService::BehindGate
        } else {
            OutOfService::Absent
        }
    }

    /// True when the out-of-service taint can be acted on: on by default (1.26+) or behind its
    /// feature gate (1.24–1.25, confirmed by a typed override at the write).
    pub fn honours_out_of_service(&self) -> bool {
        self.out_of_service() != OutOfService::Absent
    }
}

impl std::fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Why the server version is unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// No answer within the timeout.
    #[error("GET /version timed out after {secs} s")]
    Timeout {
        /// The timeout, seconds.
        secs: u64,
    },
    /// The request failed (transport error, HTTP status): the client's message.
    #[error("GET /version: {0}")]
    Request(String),
    /// An answer whose major/minor do not parse.
    #[error("GET /version: unparsable major/minor {major:?}/{minor:?} ({git_version})")]
    Unparsable {
        /// `major` as served.
        major: String,
        /// `minor` as served.
        minor: String,
        /// `gitVersion` as served.
        git_version: String,
    },
}

/// Reads the server version live, bounded by `timeout`.
pub async fn read_server_version(client: &kube::Client, timeout: Duration) -> Result<ServerVersion, VersionError> {
    match tokio::time::timeout(timeout, client.apiserver_version()).await {
        Err(_) => Err(VersionError::Timeout { secs: timeout.as_secs() }),
        Ok(Err(e)) => Err(VersionError::Request(e.to_string())),
        Ok(Ok(info)) => ServerVersion::from_info(&info).ok_or_else(|| VersionError::Unparsable {
            major: info.major.clone(),
            minor: info.minor.clone(),
            git_version: info.git_version.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_compares() {
        assert_eq!(ServerVersion::parse("1", "20"), Some(ServerVersion { major: 1, minor: 20 }));
        assert_eq!(ServerVersion::parse("1", "27+"), Some(ServerVersion { major: 1, minor: 27 }));
        assert_eq!(ServerVersion::parse("", "20"), None);
        let oos = |minor: &str| ServerVersion::parse("1", minor).unwrap().out_of_service();
        assert_eq!(oos("23"), OutOfService::Absent);
        assert_eq!(oos("24"), OutOfService::BehindGate);
        assert_eq!(oos("25+"), OutOfService::BehindGate);
        assert_eq!(oos("26"), OutOfService::OnByDefault);
        assert_eq!(oos("34"), OutOfService::OnByDefault);
        assert!(!ServerVersion::parse("1", "23").unwrap().honours_out_of_service());
        assert!(ServerVersion::parse("1", "24").unwrap().honours_out_of_service());
        assert!(ServerVersion::parse("2", "0").unwrap().honours_out_of_service());
        let info =
            k8s_openapi::apimachinery::pkg::version::Info { git_version: "v1.20.2".into(), ..Default::default() };
        assert_eq!(ServerVersion::from_info(&info).map(|v| v.to_string()).as_deref(), Some("1.20"));
    }
}
