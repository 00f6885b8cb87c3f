//! The one pod condition the diagnosis reads: `DisruptionTarget` (KEP-3329, GA in Kubernetes 1.31),
//! which says why a pod is being deleted by a controller rather than by its owner.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::{Deserialize, Serialize};

/// A pod condition (`status.conditions[]`), as far as it is read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodCondition {
    /// `DisruptionTarget` (the only type kept).
    #[serde(rename = "type")]
    pub type_: String,
    /// `True` / `False` / `Unknown`.
    #[serde(default)]
    pub status: String,
    /// Machine-readable reason (`DeletionByTaintManager`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the condition last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

/// Pod conditions, keeping only a `DisruptionTarget` (Ready, PodScheduled and the rest are never
/// read, and a 100k-pod cluster would hold five of them per pod).
pub(super) fn disruption_only<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<PodCondition>, D::Error> {
    let v: Option<Vec<PodCondition>> = Option::deserialize(d)?;
    let mut v = v.unwrap_or_default();
    v.retain(|c| c.type_ == "DisruptionTarget");
    v.shrink_to_fit();
    Ok(v)
}
