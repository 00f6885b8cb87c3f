//! The screen geometry of the app's state, at its last known terminal size: where the chrome,
//! panes and popups are (shared by mouse hits, scroll metrics and drawing). The layout itself is
//! [`view::areas`], a function of the size, the focused pane and whether a banner shows.

use ratatui::layout::Rect;

use super::{App, Pane};
use crate::ui::view::{self, Areas, Banner};

impl App {
    /// The banner line over the panes: interrupted steps of the journals, else a notice.
    pub fn banner(&self) -> Option<Banner> {
        Banner::of(&self.remedy.interrupted, self.remedy.notice.as_deref())
    }

    /// Where everything is on a screen of `area` for the app's state.
    pub fn areas_of(&self, area: Rect) -> Areas {
        let banner = self.banner();
        view::areas(area, self.focus, view::banner_rows(banner.as_ref().map(|b| b.text.as_str()), area.width))
    }

    /// Where everything is on the app's last known terminal.
    pub fn screen_areas(&self) -> Areas {
        self.areas_of(Rect::new(0, 0, self.size.0, self.size.1))
    }

    /// The body area (where the playbook and the popups are drawn) on the app's last known terminal.
    pub fn body_area(&self) -> Rect {
        self.screen_areas().body
    }

    /// The width of `pane` on the app's last known terminal (0 when it is not on screen).
    pub fn pane_width(&self, pane: Pane) -> u16 {
        self.screen_areas().panes.iter().find(|(p, _)| *p == pane).map(|(_, r)| r.width).unwrap_or(0)
    }
}
