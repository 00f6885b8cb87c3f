//! Rendering: a pure function of [`App`] state. Only [`draw`] reads the app: it lays out the
//! chrome, panes and popups ([`areas`]) and lends each a read-only context ([`ViewCtx`] for the
//! panes, [`ChromeCtx`] for the header and status line, a theme, clock or `PlaybookDrawCtx` for
//! the popups), from which each draws itself with its own state. Two layouts: a grid of all five panes when the
//! terminal is large enough (120×36 or more), tabs with one pane at a time below that (80×24).

pub mod chrome;
pub mod util;

pub use crate::ui::panes::ctx::ViewCtx;
pub use chrome::{Banner, ChromeCtx};
pub use util::more_marks;
use util::{fit, plain};

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use super::app::{App, Pane};
use crate::ui::popups::Popup;
use crate::ui::popups::help_rows;
use crate::ui::popups::playbook::view::PlaybookDrawCtx;
use crate::ui::popups::quit::QuitNow;

/// Smallest size that gets the grid layout.
pub const GRID_MIN: (u16, u16) = (120, 36);

fn is_grid(width: u16, height: u16) -> bool {
    width >= GRID_MIN.0 && height >= GRID_MIN.1
}

/// Smallest body height (terminal height less header, tabs and status) at which a list pane keeps
/// the Ceph pane under it in the tab layout.
const SPLIT_MIN: u16 = 18;

/// True when the Ceph pane is on screen for a terminal of `size` (columns, rows) with `focus`.
pub fn ceph_visible(size: (u16, u16), focus: Pane) -> bool {
    is_grid(size.0, size.1)
        || focus == Pane::Ceph
        || (matches!(focus, Pane::Nodes | Pane::Pods | Pane::Volumes) && size.1.saturating_sub(3) >= SPLIT_MIN)
}

/// The areas of a screen of `area`: header, banner (`banner` rows, 0 = none), body, status line.
fn frame_areas(area: Rect, banner: u16) -> (Rect, Option<Rect>, Rect, Rect) {
    let [header, body, status] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3), Constraint::Length(1)]).areas(area);
    if banner > 0 && body.height > 4 + banner {
        let [b, rest] = Layout::vertical([Constraint::Length(banner), Constraint::Min(2)]).areas(body);
        return (header, Some(b), rest, status);
    }
    (header, None, body, status)
}

/// The rows a banner of `text` takes on a screen `w` columns wide: one, or two when it is wider
/// (a banner ends with what to press: `(or Esc)` must not be cut off).
pub fn banner_rows(text: Option<&str>, w: u16) -> u16 {
    match text {
        None => 0,
        Some(t) if util::width(t) > w as usize => 2,
        Some(_) => 1,
    }
}

/// Where everything is on a screen of `area`: the chrome, the tab bar (tab layout only), and each
/// pane on screen (the Findings preview is not a pane).
pub struct Areas {
    /// Header line.
    pub header: Rect,
    /// Banner line, when one is shown.
    pub banner: Option<Rect>,
    /// Everything between the header (and banner) and the status line.
    pub body: Rect,
    /// Status line.
    pub status: Rect,
    /// Tab bar (tab layout only).
    pub tabs: Option<Rect>,
    /// The panes on screen.
    pub panes: Vec<(Pane, Rect)>,
    /// The Findings preview under the list (tab layout, Findings focused).
    pub preview: Option<Rect>,
}

/// The layout of a screen of `area` with `focus` and a banner of `banner` rows (0: none; shared
/// by drawing and mouse hits: `App::screen_areas`).
pub fn areas(area: Rect, focus: Pane, banner: u16) -> Areas {
    let (header, banner, body, status) = frame_areas(area, banner);
    let mut out = Areas { header, banner, body, status, tabs: None, panes: vec![], preview: None };
    if is_grid(area.width, area.height) {
        let [top, mid, bottom] =
            Layout::vertical([Constraint::Percentage(30), Constraint::Percentage(32), Constraint::Percentage(38)])
                .areas(body);
        let [findings, pods] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(top);
        let [nodes, volumes] = Layout::horizontal([Constraint::Percentage(36), Constraint::Percentage(64)]).areas(mid);
        let [ceph, events] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(bottom);
        out.panes = vec![
            (Pane::Findings, findings),
            (Pane::Pods, pods),
            (Pane::Nodes, nodes),
            (Pane::Volumes, volumes),
            (Pane::Ceph, ceph),
            (Pane::Events, events),
        ];
        return out;
    }
    let [tabs, main] = Layout::vertical([Constraint::Length(1), Constraint::Min(2)]).areas(body);
    out.tabs = Some(tabs);
    // A list pane keeps the Ceph pane of its selection below it when there is room.
    if matches!(focus, Pane::Findings | Pane::Nodes | Pane::Pods | Pane::Volumes) && main.height >= SPLIT_MIN {
        let [list, detail] = Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(main);
        out.panes.push((focus, list));
        if focus == Pane::Findings {
            out.preview = Some(detail);
        } else {
            out.panes.push((Pane::Ceph, detail));
        }
    } else {
        out.panes.push((focus, main));
    }
    out
}

/// Draws the whole screen: the only drawing that reads the app, to lay out the chrome, panes and
/// popups and lend each the read-only context it draws from.
pub fn draw(f: &mut Frame, app: &App) {
    let t = &app.theme;
    let banner = app.banner();
    let a = areas(f.area(), app.focus, banner_rows(banner.as_ref().map(|b| b.text.as_str()), f.area().width));
    let (header, body, status) = (a.header, a.body, a.status);
    let chrome = ChromeCtx {
        theme: t,
        now: app.now,
        training: app.training.as_ref().map(crate::ui::popups::training::status_segment),
        read_only: app.read_only,
        mode: app.remedy.mode,
        context: &app.context,
        namespace: app.namespace_view.as_deref().unwrap_or(&app.namespace),
        all_pods: app.all_pods,
        focus: app.focus,
        log_error: app.session.as_ref().and_then(|s| s.error()),
        log_alert: app.log_alert,
        kube_state: &app.kube_state,
        ceph: &app.ceph,
    };
    chrome::header(f, &chrome, header);
    chrome::status(f, &chrome, status);
    // interrupted steps of the journals and notices: one banner line over the panes
    if let (Some(r), Some(b)) = (a.banner, &banner) {
        chrome::banner(f, t, b, r);
    }
    if let Some(tabs) = a.tabs {
        chrome::tabs(f, &chrome, tabs);
    }
    let attr = unstick_core::attribution::Attributor::new(&app.data.snap, &app.data.lineage, &app.cfg.diagnose);
    let cx = ViewCtx {
        snap: &app.data.snap,
        lineage: &app.data.lineage,
        attr: &attr,
        events: app.data.index.events(),
        rows: &app.data.rows,
        findings: &app.data.findings,
        flagged: &app.data.flagged,
        subject: &app.subject,
        ceph: &app.ceph,
        kube_state: &app.kube_state,
        theme: t,
        now: app.now,
        focus: app.focus,
        all_pods: app.all_pods,
        namespace: app.namespace_view.as_deref(),
    };
    for (pane, r) in &a.panes {
        app.view(*pane).draw(f, *r, &cx);
    }
    if let Some(p) = a.preview {
        crate::ui::panes::findings::preview(f, app.view(Pane::Findings), &cx, p);
    }
    // the popup stack, bottom to top: the prompts over the status line, the rest over the body
    // only (the header, the banner with its messages and the status line stay)
    for (i, layer) in app.popups().iter().enumerate() {
        match layer {
            Popup::Filter(p) => p.draw(f, t, app.focus.title(), status),
            Popup::Command(p) => p.draw(f, t, status),
            Popup::Detail(d) => {
                if let Some(finding) = app.selected_finding() {
                    d.draw(f, body, &cx, finding);
                }
            }
            Popup::Playbook(pb) => {
                let pcx = PlaybookDrawCtx {
                    theme: t,
                    now: app.now,
                    mode: app.remedy.mode,
                    training: app.training.is_some(),
                    sim_speed: app.training.as_ref().map(|t| t.sim.speed()).unwrap_or(1.0),
                };
                pb.draw(f, body, &pcx);
            }
            Popup::Confirm(c) => c.draw(f, body, t),
            Popup::Override(o) => o.draw(f, body, t),
            Popup::FullCopy(e) => e.draw(f, body, t),
            Popup::Training(s) => {
                if let Some(tr) = &app.training {
                    s.draw(f, t, tr, body);
                }
            }
            Popup::Describe(d) => d.draw(f, body, t, &app.data.snap.events, app.now),
            Popup::Fleet(v) => v.draw(f, body, t),
            Popup::Help(h) => {
                let below = i.checked_sub(1).and_then(|b| app.popups().get(b));
                help_rows::for_layer(below, app.focus, app.training.is_some()).draw(f, body, t, h.scroll)
            }
            Popup::Note(n) => n.draw(f, body, t, app.session.as_ref().map(|s| s.id())),
            Popup::Quit(q) => {
                let now = app
                    .popups()
                    .playbook()
                    .map(|pb| match pb.in_progress() {
                        Some(running) => QuitNow::Running(running),
                        None => QuitNow::Open(pb.open_at()),
                    })
                    .or_else(|| app.training_running().map(QuitNow::Training));
                q.draw(f, body, t, now)
            }
        }
    }
}
