//! A pane drawn: [`PaneView::draw`] shows why a pane whose source is forbidden or never listed
//! has no rows, else picks the pane kind's drawing: [`super::lists`], [`super::findings`],
//! [`super::ceph`], [`super::events`].

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

use super::Pane;
use super::ctx::{ViewCtx, block};
use super::state::PaneView;
use unstick_core::sources::kube::SourceState;

impl PaneView {
    /// Draws the pane in `area`; a pane whose source is forbidden or never listed shows why
    /// instead of rows.
    pub fn draw(&self, f: &mut Frame, area: Rect, cx: &ViewCtx) {
        let pane = self.pane();
        if let Some((kind, state)) = cx.pane_state(pane) {
            let msg = match state {
                SourceState::Forbidden { verb, message } => {
                    Some((format!("forbidden: {} {}", verb.as_str(), kind.resource()), message.clone()))
                }
                SourceState::Error(e) => Some((format!("error: list {}", kind.resource()), e.clone())),
                _ => None,
            };
            if let Some((head, detail)) = msg {
                let text = vec![
                    Line::styled(head, cx.theme.error),
                    Line::styled(unstick_core::text::sanitize(&detail), cx.theme.muted),
                ];
                let p = Paragraph::new(text).wrap(Wrap { trim: true }).block(block(cx, pane, String::new()));
                f.render_widget(p, area);
                return;
            }
        }
        match pane {
            Pane::Findings => super::findings::draw(f, self, cx, area),
            Pane::Nodes => super::lists::nodes(f, self, cx, area),
            Pane::Pods => super::lists::pods(f, self, cx, area),
            Pane::Volumes => super::lists::volumes(f, self, cx, area),
            Pane::Ceph => super::ceph::draw(f, self, cx, area),
            Pane::Events => super::events::draw(f, self, cx, area),
        }
    }
}
