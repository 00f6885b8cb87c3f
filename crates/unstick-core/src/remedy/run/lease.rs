//! One `coordination.k8s.io/v1` Lease per volume (`unstick-<pv name>`, namespace from
//! `remedy.lease_namespace`), held while a console acts on that volume, so two operators cannot act
//! on one volume at once. `holderIdentity` = `user@host#<session>`.
//!
//! Every write uses optimistic concurrency: creation fails with 409 if the Lease exists, and
//! renew / take-over / release carry the `resourceVersion` read just before (409 on any
//! interleaved write). So of two contenders exactly one wins. An expired Lease (not renewed for
//! `leaseDurationSeconds`) is never taken silently: [`LeaseManager::take_over`] is a separate,
//! explicit call naming the holder being replaced.
//!
//! Building a [`LeaseManager`] needs an [`Executor`], so read-only consoles cannot write Leases;
//! they can still see who holds one with [`read_holder`].

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, DeleteParams, PostParams, Preconditions};

use crate::clock::SharedClock;
use crate::remedy::action::executor::Executor;

/// The Lease name for a volume: `unstick-<pv>`, lowercased, other characters mapped to `-`, at most
/// 253 characters (a DNS subdomain).
pub fn lease_name(pv: &str) -> String {
    let mut s: String = format!("unstick-{pv}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c.to_ascii_lowercase() } else { '-' })
        .collect();
    s.truncate(253);
    s.trim_end_matches(['-', '.']).to_string()
}

/// A holder identity unique to this console process: `user@host#<hex>` (8 random hex digits).
pub fn session_identity(operator: &str) -> String {
    format!("{operator}#{:x}", fastrand::u32(..))
}

/// Who holds a Lease, as read from the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    /// `spec.holderIdentity` (empty when released).
    pub identity: String,
    /// `spec.renewTime`.
    pub renewed: Option<Timestamp>,
    /// `spec.leaseDurationSeconds`.
    pub duration_seconds: i64,
    /// Not renewed within its duration (judged with this machine's clock).
    pub expired: bool,
}

impl std::fmt::Display for LeaseHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let when = self.renewed.map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()).unwrap_or_else(|| "never".into());
        write!(
            f,
            "{} (renewed {when}, {} s lease{})",
            self.identity,
            self.duration_seconds,
            if self.expired { ", EXPIRED" } else { "" }
        )
    }
}

/// A Lease operation that did not give us the Lease.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    /// Another console holds it and it has not expired.
    #[error("volume is locked by another operator: Lease {namespace}/{name} held by {holder}")]
    HeldBy {
        /// Namespace.
        namespace: String,
        /// Lease name.
        name: String,
        /// The holder.
        holder: LeaseHolder,
    },
    /// Another console held it and it expired: it may be taken over with an explicit confirmation.
    #[error(
        "Lease {namespace}/{name} of {holder} has expired; take it over only after confirming that operator stopped"
    )]
    Expired {
        /// Namespace.
        namespace: String,
        /// Lease name.
        name: String,
        /// The previous holder.
        holder: LeaseHolder,
    },
    /// We held it, but it changed under us (taken over, deleted, or a concurrent write won).
    #[error("Lease {namespace}/{name} was lost: {why}")]
    Lost {
        /// Namespace.
        namespace: String,
        /// Lease name.
        name: String,
        /// What was found.
        why: String,
    },
    /// The API call failed or timed out.
    #[error("Lease {namespace}/{name}: {error}")]
    Api {
        /// Namespace.
        namespace: String,
        /// Lease name.
        name: String,
        /// The error.
        error: String,
    },
}

/// A Lease we hold: renew it before each action, release it at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// Lease name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// Our identity.
    pub identity: String,
    resource_version: String,
    uid: String,
}

/// Acquires, renews and releases Leases for one identity.
#[derive(Clone)]
pub struct LeaseManager {
    api: Api<Lease>,
    namespace: String,
    identity: String,
    duration: Duration,
    timeout: Duration,
    clock: SharedClock,
}

fn holder_of(l: &Lease, now: Timestamp) -> LeaseHolder {
    let spec = l.spec.clone().unwrap_or_default();
    let renewed = spec.renew_time.as_ref().or(spec.acquire_time.as_ref()).map(|t| t.0);
    let duration_seconds = i64::from(spec.lease_duration_seconds.unwrap_or(0));
    let identity = spec.holder_identity.unwrap_or_default();
    let expired =
        identity.is_empty() || renewed.is_none_or(|r| r + jiff::SignedDuration::from_secs(duration_seconds) < now);
    LeaseHolder { identity, renewed, duration_seconds, expired }
}

/// Who holds the volume's Lease (`None`: nobody, the Lease does not exist), judged expired or
/// not at `now` (this machine's wall clock in the console). Read-only.
pub async fn read_holder(
    kube: kube::Client,
    namespace: &str,
    name: &str,
    timeout: Duration,
    now: Timestamp,
) -> Result<Option<LeaseHolder>, LeaseError> {
    let api: Api<Lease> = Api::namespaced(kube, namespace);
    let err = |error: String| LeaseError::Api { namespace: namespace.into(), name: name.into(), error };
    match tokio::time::timeout(timeout, api.get_opt(name)).await {
        Err(_) => Err(err(format!("timed out after {} s", timeout.as_secs()))),
        Ok(Err(e)) => Err(err(e.to_string())),
        Ok(Ok(l)) => Ok(l.map(|l| holder_of(&l, now))),
    }
}

impl LeaseManager {
    /// A manager writing Leases in `namespace` as `identity`, with `duration` per Lease. Needs an
    /// [`Executor`] (write access). Acquire and renew times are read from `clock` (the wall clock
    /// in the console: other operators' consoles judge expiry with theirs).
    pub fn new(exec: &Executor, namespace: &str, identity: &str, duration: Duration, clock: SharedClock) -> Self {
        Self {
            api: Api::namespaced(exec.kube().clone(), namespace),
            namespace: namespace.into(),
            identity: identity.into(),
            duration,
            timeout: exec.api_timeout(),
            clock,
        }
    }

    /// Our identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    fn err(&self, name: &str, error: impl std::fmt::Display) -> LeaseError {
        LeaseError::Api { namespace: self.namespace.clone(), name: name.into(), error: error.to_string() }
    }

    async fn call<T>(
        &self,
        name: &str,
        fut: impl std::future::Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, LeaseError> {
        match tokio::time::timeout(self.timeout, fut).await {
            Err(_) => Err(self.err(name, format!("timed out after {} s", self.timeout.as_secs()))),
            Ok(r) => r.map_err(|e| match e {
                kube::Error::Api(s) if s.code == 409 => LeaseError::Lost {
                    namespace: self.namespace.clone(),
                    name: name.into(),
                    why: format!("a concurrent write won ({})", s.message),
                },
                e => self.err(name, e),
            }),
        }
    }

    fn held(&self, l: &Lease) -> Held {
        Held {
            name: l.metadata.name.clone().unwrap_or_default(),
            namespace: self.namespace.clone(),
            identity: self.identity.clone(),
            resource_version: l.metadata.resource_version.clone().unwrap_or_default(),
            uid: l.metadata.uid.clone().unwrap_or_default(),
        }
    }

    fn spec(&self, now: Timestamp, acquire: Option<Timestamp>, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(i32::try_from(self.duration.as_secs()).unwrap_or(i32::MAX)),
            acquire_time: Some(MicroTime(acquire.unwrap_or(now))),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(transitions),
            ..Default::default()
        }
    }

    /// Takes the Lease for `name` if nobody holds it (creates it), or renews it if we already hold
    /// it. Someone else's Lease gives [`LeaseError::HeldBy`] (live) or [`LeaseError::Expired`].
    pub async fn acquire(&self, name: &str) -> Result<Held, LeaseError> {
        let now = self.clock.now();
        match self.call(name, self.api.get_opt(name)).await? {
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(name.into()),
                        namespace: Some(self.namespace.clone()),
                        labels: Some([("app.kubernetes.io/managed-by".to_string(), "unstick".to_string())].into()),
                        ..Default::default()
                    },
                    spec: Some(self.spec(now, None, 0)),
                };
                match self.call(name, self.api.create(&PostParams::default(), &lease)).await {
                    Ok(l) => Ok(self.held(&l)),
                    // 409 AlreadyExists: another console created it first; report who.
                    Err(LeaseError::Lost { .. }) => match self.call(name, self.api.get_opt(name)).await? {
                        Some(l) => Err(self.other(name, &l)),
                        None => Err(self.err(name, "created and deleted concurrently; try again")),
                    },
                    Err(e) => Err(e),
                }
            }
            Some(l) => {
                let h = holder_of(&l, now);
                if h.identity == self.identity {
                    let mut held = self.held(&l);
                    self.renew(&mut held).await?;
                    return Ok(held);
                }
                if h.identity.is_empty() {
                    // released (holder cleared): free to take, still with optimistic concurrency
                    return self.replace_holder(name, l).await;
                }
                Err(self.other(name, &l))
            }
        }
    }

    fn other(&self, name: &str, l: &Lease) -> LeaseError {
        let holder = holder_of(l, self.clock.now());
        if holder.expired {
            LeaseError::Expired { namespace: self.namespace.clone(), name: name.into(), holder }
        } else {
            LeaseError::HeldBy { namespace: self.namespace.clone(), name: name.into(), holder }
        }
    }

    async fn replace_holder(&self, name: &str, mut l: Lease) -> Result<Held, LeaseError> {
        let transitions = l.spec.as_ref().and_then(|s| s.lease_transitions).unwrap_or(0) + 1;
        l.spec = Some(self.spec(self.clock.now(), None, transitions));
        let l = self.call(name, self.api.replace(name, &PostParams::default(), &l)).await?;
        Ok(self.held(&l))
    }

    /// Takes over an EXPIRED Lease held by `expected_holder` (the identity the operator confirmed).
    /// Fails if it is not expired, or its holder is not `expected_holder`, or another console wins.
    pub async fn take_over(&self, name: &str, expected_holder: &str) -> Result<Held, LeaseError> {
        let l = self.call(name, self.api.get_opt(name)).await?.ok_or_else(|| LeaseError::Lost {
            namespace: self.namespace.clone(),
            name: name.into(),
            why: "it no longer exists; acquire it".into(),
        })?;
        let h = holder_of(&l, self.clock.now());
        if h.identity != expected_holder {
            return Err(LeaseError::Lost {
                namespace: self.namespace.clone(),
                name: name.into(),
                why: format!("holder is now {h}, not {expected_holder}"),
            });
        }
        if !h.expired {
            return Err(LeaseError::HeldBy { namespace: self.namespace.clone(), name: name.into(), holder: h });
        }
        self.replace_holder(name, l).await
    }

    /// Renews a Lease we hold (optimistic: fails with [`LeaseError::Lost`] if anyone else wrote it).
    pub async fn renew(&self, held: &mut Held) -> Result<(), LeaseError> {
        let name = held.name.clone();
        let l = self.call(&name, self.api.get_opt(&name)).await?;
        let lost = |why: String| LeaseError::Lost { namespace: self.namespace.clone(), name: name.clone(), why };
        let Some(mut l) = l else { return Err(lost("deleted".into())) };
        let h = holder_of(&l, self.clock.now());
        if l.metadata.uid.as_deref() != Some(held.uid.as_str()) || h.identity != self.identity {
            return Err(lost(format!("now held by {h}")));
        }
        let spec = l.spec.get_or_insert_with(Default::default);
        spec.renew_time = Some(MicroTime(self.clock.now()));
        let l = self.call(&name, self.api.replace(&name, &PostParams::default(), &l)).await?;
        *held = self.held(&l);
        Ok(())
    }

    /// Releases a Lease we hold: deletes it, with `uid` + `resourceVersion` preconditions (so a
    /// Lease someone else took over is left alone).
    pub async fn release(&self, held: Held) -> Result<(), LeaseError> {
        let dp = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(held.uid.clone()),
                resource_version: Some(held.resource_version.clone()),
            }),
            ..Default::default()
        };
        match tokio::time::timeout(self.timeout, self.api.delete(&held.name, &dp)).await {
            Err(_) => Err(self.err(&held.name, format!("timed out after {} s", self.timeout.as_secs()))),
            Ok(Ok(_)) => Ok(()),
            Ok(Err(kube::Error::Api(s))) if s.code == 404 => Ok(()),
            Ok(Err(kube::Error::Api(s))) if s.code == 409 => Err(LeaseError::Lost {
                namespace: self.namespace.clone(),
                name: held.name.clone(),
                why: format!("changed since we renewed it; left alone ({})", s.message),
            }),
            Ok(Err(e)) => Err(self.err(&held.name, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            lease_name("pvc-2de7d17c-04c6-11eb-b22b-5254002d96de"),
            "unstick-pvc-2de7d17c-04c6-11eb-b22b-5254002d96de"
        );
        assert_eq!(lease_name("Index_API pv"), "unstick-index-api-pv");
        assert!(lease_name(&"x".repeat(400)).len() <= 253);
        let a = session_identity("alice@bastion");
        assert!(a.starts_with("alice@bastion#"), "{a}");
    }

    #[test]
    fn expiry() {
        let now: Timestamp = "2026-11-22T04:00:00Z".parse().unwrap();
        let lease = |holder: &str, renewed: &str| Lease {
            metadata: Default::default(),
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                lease_duration_seconds: Some(60),
                renew_time: Some(MicroTime(renewed.parse().unwrap())),
                ..Default::default()
            }),
        };
        assert!(!holder_of(&lease("a", "2026-11-22T03:59:30Z"), now).expired);
        assert!(holder_of(&lease("a", "2026-11-22T03:58:30Z"), now).expired);
        assert!(holder_of(&lease("", "2026-11-22T03:59:59Z"), now).expired, "released");
        let h = holder_of(&lease("a", "2026-11-22T03:59:30Z"), now);
        assert!(h.to_string().starts_with("a (renewed 2026-11-22T03:59:30Z, 60 s lease"));
    }
}
