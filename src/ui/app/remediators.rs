//! The Medik8s remediators in the live console: their objects (NodeHealthCheck,
//! SelfNodeRemediation, FenceAgentsRemediation) are listed every [`EVERY_SECONDS`] while the
//! console has an API client ([`Effect::Remediators`], answered by [`Msg::Remediators`]); a
//! kind whose CRD is absent (404) reads as not installed. The diagnosis then shows a remediator
//! acting on a node in its findings (the `remediator` evidence line), as diagnose does.

use jiff::Timestamp;

#[cfg(doc)]
use super::Msg;
use super::{App, Effect};

/// Seconds between two lists of the remediators' objects.
pub const EVERY_SECONDS: i64 = 15;

/// Whether and when the remediators are listed.
#[derive(Debug, Clone, Default)]
pub struct RemediatorsWatch {
    /// The console has an API client to list them with (off in scenarios and training).
    pub live: bool,
    /// When the last list was asked for.
    pub asked_at: Option<Timestamp>,
}

impl App {
    /// [`Effect::Remediators`] when a list is due (never asked, or [`EVERY_SECONDS`] since).
    pub(crate) fn remediators_if_due(&mut self) -> Vec<Effect> {
        let w = &mut self.remediators;
        let due = w.live && w.asked_at.is_none_or(|t| (self.now - t).get_seconds() >= EVERY_SECONDS);
        if !due {
            return vec![];
        }
        w.asked_at = Some(self.now);
        vec![Effect::Remediators]
    }

    /// Takes a list's answer into the snapshot and re-diagnoses.
    pub(crate) fn on_remediators(&mut self, r: unstick_core::model::remediation::Remediators) -> Vec<Effect> {
        for (kind, why) in &r.unreadable {
            tracing::warn!(kind = kind.plural(), error = %why, "Medik8s remediators not read");
        }
        self.data.snap.remediators = Some(r);
        self.rediagnose();
        vec![]
    }
}
