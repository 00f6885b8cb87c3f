//! What a pane is drawn from besides its own state: a read-only [`ViewCtx`] of what the panes
//! show (never the whole app), and the pane border and filtering every pane kind's drawing uses.

use std::collections::BTreeMap;

use jiff::Timestamp;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};

use super::ceph_status::CephStatus;
use crate::theme::Theme;
use crate::ui::panes::{Pane, Subject, image_of, pane_state};
use unstick_core::attribution::Attributor;
use unstick_core::console_state::derived::Flagged;
use unstick_core::console_state::rows::Rows;
use unstick_core::diagnose::Finding;
use unstick_core::diagnose::event_index::EventIndex;
use unstick_core::lineage::Lineage;
use unstick_core::model::{ImageRef, Snapshot};
use unstick_core::sources::kube::{SourceState, WatchedKind};
use unstick_core::text::human_age;

/// What the panes show, borrowed from the app for one frame.
#[derive(Clone, Copy)]
pub struct ViewCtx<'a> {
    /// Current data.
    pub snap: &'a Snapshot,
    /// Joined view of `snap`.
    pub lineage: &'a Lineage,
    /// Who Ceph client addresses belong to, and by which proof.
    pub attr: &'a Attributor<'a>,
    /// `snap`'s events by involved object.
    pub events: &'a EventIndex,
    /// Visible rows of the list panes.
    pub rows: &'a Rows,
    /// Findings of the last diagnosis, in the Findings pane's order.
    pub findings: &'a [Finding],
    /// Objects that appear in a finding.
    pub flagged: &'a Flagged,
    /// What the Ceph and Events panes follow.
    pub subject: &'a Subject,
    /// Ceph requests in flight, Ceph access on or off.
    pub ceph: &'a CephStatus,
    /// Connection state per kind.
    pub kube_state: &'a BTreeMap<WatchedKind, SourceState>,
    /// Resolved theme.
    pub theme: &'a Theme,
    /// The console's clock (ages are computed against it).
    pub now: Timestamp,
    /// The focused pane (drawn with a thick border and a bright selection).
    pub focus: Pane,
    /// All pods shown, not only troubled ones.
    pub all_pods: bool,
    /// The `:ns` namespace shown, if any.
    pub namespace: Option<&'a str>,
}

impl ViewCtx<'_> {
    /// The state of the kinds `pane` shows (see [`pane_state`]).
    pub fn pane_state(&self, pane: Pane) -> Option<(WatchedKind, &SourceState)> {
        pane_state(self.kube_state, pane)
    }

    /// The RBD image the Ceph pane shows.
    pub fn subject_image(&self) -> Option<ImageRef> {
        image_of(self.subject, self.lineage)
    }

    /// `at`'s age at the console's clock, as `5s`, `3m`, ...
    pub fn age(&self, at: Timestamp) -> String {
        human_age((self.now - at).get_seconds())
    }
}

/// The pane's border: its title, `extra` (counts, filter, subject), and how stale its source is.
pub(super) fn block<'a>(cx: &ViewCtx, pane: Pane, extra: String) -> Block<'a> {
    let t = cx.theme;
    let focused = cx.focus == pane;
    let mut title = vec![Span::styled(format!(" {} ", pane.title()), t.title)];
    if !extra.is_empty() {
        title.push(Span::styled(format!("{extra} "), t.muted));
    }
    if let Some((_, SourceState::Stale { since, error })) = cx.pane_state(pane) {
        title.push(Span::styled(format!("stale {}: {} ", cx.age(*since), unstick_core::text::sanitize(error)), t.warn));
    }
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused { BorderType::Thick } else { BorderType::Plain })
        .border_style(if focused { t.border_focused } else { t.border })
        .title(Line::from(title))
}

/// A line in the theme's muted style.
pub(super) fn muted<'a>(t: &Theme, s: impl Into<String>) -> Line<'a> {
    Line::styled(s.into(), t.muted)
}

/// The lines of a text pane holding the pane's `filter` text (all of them without a filter; a
/// line saying so when none does).
pub(super) fn filtered<'a>(lines: Vec<Line<'a>>, filter: &unstick_core::console_state::rows::Filter) -> Vec<Line<'a>> {
    if filter.is_empty() {
        return lines;
    }
    let text = |l: &Line| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>();
    let kept: Vec<Line> = lines.into_iter().filter(|l| filter.matches([text(l).as_str()])).collect();
    if kept.is_empty() {
        return vec![Line::raw(format!("no line holds \"{}\" (/ then Esc clears the filter)", filter.text()))];
    }
    kept
}
