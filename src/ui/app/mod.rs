//! Console state and the one place it changes: [`App::update`].
//!
//! A key arrives as [`Msg::Key`] and goes to the popup stack's top layer first
//! ([`crate::ui::popups::Stack`], routed in `routing.rs`), which answers with an
//! [`crate::ui::outcome::Outcome`] the app applies; under the stack the focused pane's keys are
//! [`Action`]s (see `keys`). IO results arrive as [`Msg`]s too. `update` returns the IO to start
//! as [`Effect`]s. Rendering (`view`) only reads this state.

mod ceph;
mod command;
mod derive;
mod describe;
mod detail;
mod filter;
mod layout;
mod mouse;
pub mod remediators;
mod routing;
mod session;
mod train;

use std::collections::BTreeMap;

use crate::theme::Theme;
use crate::ui::panes::state::{PaneView, Room};
use crate::ui::popups::finding_detail::FindingDetail;
use crate::ui::popups::playbook::{RemedyUi, WriteMode};
use crate::ui::popups::{Kind, Popup, Stack};
use jiff::Timestamp;
use unstick_core::config::Config;
use unstick_core::console_state::derived::Derived;
use unstick_core::console_state::session_rec::SessionRecorder;
use unstick_core::diagnose::Finding;
use unstick_core::model::{Snapshot, key_of};
use unstick_core::remedy::service::{RemedyMsg, RemedyRequest};
use unstick_core::sources::ceph::{CephMsg, CephRequest};
use unstick_core::sources::kube::{SourceState, WatchedKind};

pub use crate::ui::action::Action;
pub use crate::ui::panes::ceph_status::CephStatus;
use crate::ui::panes::subject_of_finding;
pub use crate::ui::panes::{Pane, Subject};

/// Seconds between re-diagnoses on clock ticks (data changes re-diagnose at once).
const REDIAGNOSE_SECONDS: i64 = 5;

/// Messages into the app.
#[derive(Debug)]
pub enum Msg {
    /// A key press, as the terminal delivers it: to the popup stack's top layer, else the
    /// focused pane ([`App::key`]).
    Key(crossterm::event::KeyEvent),
    /// New Kubernetes objects (the Ceph part of the snapshot is ignored): the whole lists, diffed
    /// with the app's (tests, benches).
    Objects(Box<Snapshot>),
    /// What the watch stores changed since the last take (the console's loop): patched into the
    /// app's snapshot at the cost of the change. The snapshot's lists must be sorted by
    /// (namespace, name), as they are when they came from patches only (the console's app
    /// starts empty) or from `KubeStores::fill`.
    Watched(Box<unstick_core::sources::kube::Deltas>),
    /// A source's connection state changed.
    KubeState(WatchedKind, SourceState),
    /// A Ceph answer.
    Ceph(CephMsg),
    /// Clock tick: recompute ages, refresh the visible image if due.
    Tick(Timestamp),
    /// The terminal's size (columns, rows).
    Resize(u16, u16),
    /// A message of the remediation service.
    Remedy(RemedyMsg),
    /// The API server's answer for the describe / YAML popup.
    Described(unstick_core::sources::describe::DescribeMsg),
    /// A mouse click or wheel turn.
    Mouse(crossterm::event::MouseEvent),
    /// The fleet diagnosis for the fleet view, or why there is none (one line).
    Fleet(Result<unstick_core::fleet::FleetReport, String>),
    /// csi-addons' NetworkFences, NetworkFenceClasses and CSIAddonsNodes as listed
    /// ([`Effect::Fences`]): `None`s when csi-addons is not installed; an error keeps the ones
    /// read before.
    Fences(Result<Fences, unstick_core::sources::kube::network_fence::FenceReadError>),
    /// The Medik8s remediators' objects as listed ([`Effect::Remediators`]).
    Remediators(unstick_core::model::remediation::Remediators),
}

/// The NetworkFences, NetworkFenceClasses and CSIAddonsNodes of a cluster.
pub type Fences = unstick_core::sources::kube::network_fence::CsiAddons;

/// IO the loop must start.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send a request to the Ceph worker.
    Ceph(CephRequest),
    /// Send a request to the remediation worker.
    Remedy(RemedyRequest),
    /// Read one object from the API server for the describe / YAML popup.
    Describe(unstick_core::diagnose::ObjectRef),
    /// Diagnose every kubeconfig context for the fleet view (answered by [`Msg::Fleet`]).
    Fleet,
    /// List csi-addons' NetworkFences, classes and CSIAddonsNodes (answered by [`Msg::Fences`]),
    /// with each blocklist read: the entries a Fenced fence covers are csi-addons', not
    /// leftovers; a node's fence client only names whose client an entry covers.
    Fences,
    /// List the Medik8s remediators' objects (answered by [`Msg::Remediators`]).
    Remediators,
    /// Put text on the terminal's clipboard (an OSC 52 sequence to the terminal: it works over
    /// SSH and tmux with `set-clipboard on`; a terminal without it ignores the sequence).
    Clipboard(String),
}

/// The console's whole state.
pub struct App {
    /// Effective configuration.
    pub cfg: Config,
    /// Resolved theme.
    pub theme: Theme,
    /// kubeconfig context name (or scenario name).
    pub context: String,
    /// Namespace shown in the header (`all` for all namespaces).
    pub namespace: String,
    /// `--read-only`: shown as a badge; no write path exists in this build's panes.
    pub read_only: bool,
    /// The snapshot and what is derived from it: lineage, rows, findings, the rules' indexes.
    pub data: Derived,
    /// `:ns NAME`: only this namespace's pods and claims (`None`: every namespace read); the
    /// panes' own filters are theirs ([`App::view`]).
    pub namespace_view: Option<String>,
    /// Connection state per kind.
    pub kube_state: BTreeMap<WatchedKind, SourceState>,
    /// Ceph pane status.
    pub ceph: CephStatus,
    /// The Medik8s remediators' periodic list ([`remediators`]).
    pub remediators: remediators::RemediatorsWatch,
    /// Focused pane.
    pub focus: Pane,
    /// Each pane's own state (selection or scroll offset, column offset, filter), in
    /// [`Pane::ALL`] order.
    views: [PaneView; 6],
    /// What the Ceph and Events panes follow.
    pub subject: Subject,
    /// Show all pods instead of troubled ones.
    pub all_pods: bool,
    /// Drill history for Esc.
    pub back_stack: Vec<(Pane, usize)>,
    /// The clock ages are computed against.
    pub now: Timestamp,
    /// Set when the user asked to quit.
    pub quit: bool,
    /// The kubeconfig's contexts (`:ctx` lists them, Tab completes them); empty off a live
    /// cluster.
    pub contexts: Vec<String>,
    /// `:ctx NAME` on a live console: the context to switch to once the event loop has ended
    /// ([`crate::cmd::console`] closes this context's sources and starts that one's).
    pub switch_to: Option<String>,
    /// Open the fleet view when the event loop starts (`--fleet`; taken once, so a context
    /// switch does not reopen it).
    pub open_fleet_at_start: bool,
    /// Rows per page, from the last render (for PageUp/PageDown).
    pub page: usize,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// Guided remediation: write mode, interrupted steps, the runs in progress.
    pub remedy: RemedyUi,
    /// The session log, when this console writes one ([`App::attach_session`]).
    pub session: Option<SessionRecorder>,
    /// Findings on a volume that cleared before a pod of that volume was seen Running: the session
    /// log's `restored` record waits for it.
    pub(crate) awaiting_restore: Vec<Finding>,
    /// The selected finding that cleared last, as said (`stale-lock on pvc-… cleared at
    /// 04:10:00`), for `p` on the finding the selection moved to.
    pub(crate) cleared_selection: Option<String>,
    /// The first session log error just arrived: the status line shows it until the next key.
    pub log_alert: bool,
    /// Training on a scenario (`unstick train`): briefing, goals, hints, debrief.
    pub training: Option<unstick_core::train::Training>,
    /// Everything over the panes, bottom first: help, prompts, popups, the Playbook view, the
    /// training screens ([`App::popups`]).
    pub(super) popups: Stack,
}

impl App {
    /// A new app on an empty snapshot, its clock at `now` (the program clock's time at start;
    /// ticks move it on).
    pub fn new(
        cfg: Config,
        theme: Theme,
        context: String,
        namespace: Option<String>,
        read_only: bool,
        now: Timestamp,
    ) -> Self {
        let all_pods = cfg.ui.show_all_pods;
        App {
            cfg,
            theme,
            context,
            namespace: namespace.unwrap_or_else(|| "all".into()),
            read_only,
            data: Derived::default(),
            namespace_view: None,
            kube_state: WatchedKind::ALL.iter().map(|k| (*k, SourceState::Connecting)).collect(),
            ceph: CephStatus { enabled: true, ..Default::default() },
            remediators: Default::default(),
            focus: Pane::Findings,
            views: Pane::ALL.map(PaneView::new),
            subject: Subject::None,
            all_pods,
            back_stack: vec![],
            now,
            quit: false,
            contexts: vec![],
            switch_to: None,
            open_fleet_at_start: false,
            page: 10,
            size: (80, 24),
            remedy: RemedyUi::new(if read_only { WriteMode::ReadOnly } else { WriteMode::Live }),
            session: None,
            awaiting_restore: Vec::new(),
            cleared_selection: None,
            log_alert: false,
            training: None,
            popups: Stack::default(),
        }
    }

    /// Applies one message and returns the IO to start; then notes the view and session log
    /// errors for the session log.
    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        let tick = matches!(msg, Msg::Tick(_));
        if matches!(msg, Msg::Key(_)) {
            // the alert was seen: from now on the status line keeps a short mark
            self.log_alert = false;
        }
        let fx = self.apply(msg);
        self.after_update(tick);
        fx
    }

    fn apply(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Key(k) => self.key(k),
            Msg::Described(m) => {
                self.on_described(m);
                vec![]
            }
            Msg::Mouse(m) => self.mouse(m),
            Msg::Fleet(r) => {
                if let Some(i) = self.popups.position(Kind::Fleet)
                    && let Some(Popup::Fleet(v)) = self.popups.get_mut(i)
                {
                    v.set(r);
                }
                vec![]
            }
            Msg::Remedy(m) => {
                self.train_observe(&m);
                let acted = matches!(m, RemedyMsg::Done { .. } | RemedyMsg::Verified { remaining: None, .. });
                self.on_remedy(m);
                self.train_steps();
                if acted { self.refresh_after_action() } else { vec![] }
            }
            Msg::Objects(snap) => self.on_objects(*snap),
            Msg::Watched(d) => self.on_watched(*d),
            Msg::KubeState(kind, state) => {
                self.kube_state.insert(kind, state);
                vec![]
            }
            Msg::Ceph(m) => {
                self.on_ceph(m);
                self.rediagnose();
                vec![]
            }
            Msg::Fences(Ok(c)) => {
                c.apply(&mut self.data.snap);
                self.rediagnose();
                vec![]
            }
            Msg::Remediators(r) => self.on_remediators(r),
            Msg::Fences(Err(e)) => {
                tracing::warn!(error = %e, "NetworkFences not read; the ones read before are kept");
                vec![]
            }
            Msg::Tick(now) => {
                self.now = now;
                // Grace periods depend on the clock: every few seconds, re-diagnose what the clock
                // can change (the findings' ages, the thresholds reached)
                match self.data.diagnosed_at {
                    None => self.rediagnose(),
                    Some(t) if (now - t).get_seconds() >= REDIAGNOSE_SECONDS => self.rediagnose_due(),
                    Some(_) => {}
                }
                let mut fx = self.refresh_if_due();
                fx.extend(self.rescan_if_due());
                fx.extend(self.remediators_if_due());
                self.train_tick();
                fx
            }
            Msg::Resize(w, h) => {
                self.size = (w, h);
                self.page = (h as usize).saturating_sub(8).max(1);
                vec![]
            }
        }
    }

    /// A pane key (no popup took it): the focused pane moves its own selection and columns; the
    /// rest are the app's keys.
    pub(super) fn act(&mut self, a: Action) -> Vec<Effect> {
        let room = self.room(self.focus);
        if self.views[self.focus.index()].handle_key(a, room) == crate::ui::outcome::Outcome::Ignored {
            return self.global_key(a);
        }
        self.follow_list_pane()
    }

    /// After a key: the Ceph and Events panes follow the focused list pane's selection.
    fn follow_list_pane(&mut self) -> Vec<Effect> {
        if matches!(self.focus, Pane::Findings | Pane::Nodes | Pane::Pods | Pane::Volumes) {
            return self.follow_selection();
        }
        vec![]
    }

    /// A key no popup and no pane took.
    fn global_key(&mut self, a: Action) -> Vec<Effect> {
        match a {
            Action::Quit => self.request_quit(),
            Action::ToggleHelp => self.open_help(),
            Action::NextPane => self.focus = Pane::ALL[(self.focus.index() + 1) % Pane::ALL.len()],
            Action::PrevPane => {
                self.focus = Pane::ALL[(self.focus.index() + Pane::ALL.len() - 1) % Pane::ALL.len()]
            }
            Action::Focus(p) => self.focus = p,
            Action::StartFilter => self.open_filter(),
            Action::Drill => return self.drill(),
            Action::Back => self.back(),
            Action::ToggleAllPods => {
                self.all_pods = !self.all_pods;
                self.recompute_rows();
            }
            Action::RefreshCeph => {
                let mut fx = self.request_image(true);
                fx.extend(self.request_blocklist());
                return fx;
            }
            Action::Scan => return self.start_scan(),
            Action::OpenPlaybook => {
                if self.focus == Pane::Findings {
                    return self.open_playbook();
                }
                self.remedy.notice = Some("p: select a finding in the Findings pane (1) first".into());
            }
            Action::Note => self.open_note(),
            Action::Hints => self.toggle_hints(),
            Action::Command => self.open_command(),
            Action::Describe => return self.open_describe_view(),
            Action::Yaml => return self.open_yaml_view(),
            Action::Undo => {
                self.remedy.notice =
                    Some("u: open the incident's playbook (p on its finding) first; `unstick undo INCIDENT` works without the console".into())
            }
            // the pane's own keys (moving, columns) never reach here; the Playbook view's keys
            // are not bound in the panes
            Action::Run
            | Action::Skip
            | Action::Acknowledge
            | Action::Override
            | Action::TakeOver
            | Action::Export
            | Action::CopyCommands => {}
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
            | Action::Left
            | Action::Right => {}
        }
        self.follow_list_pane()
    }

    /// Number of rows in a list pane.
    pub fn row_count(&self, pane: Pane) -> usize {
        match pane {
            Pane::Nodes => self.data.rows.nodes.len(),
            Pane::Pods => self.data.rows.pods.len(),
            Pane::Volumes => self.data.rows.volumes.len(),
            Pane::Findings => self.data.rows.findings.len(),
            Pane::Ceph | Pane::Events => usize::MAX,
        }
    }

    /// The selected row of `pane` (scroll offset for Ceph / Events).
    pub fn selected_row(&self, pane: Pane) -> usize {
        self.views[pane.index()].selected()
    }

    /// The state of `pane` (selection, column offset, filter).
    pub fn view(&self, pane: Pane) -> &PaneView {
        &self.views[pane.index()]
    }

    /// The state of `pane`, to change (the app's jumps and drills select rows).
    pub(crate) fn view_mut(&mut self, pane: Pane) -> &mut PaneView {
        &mut self.views[pane.index()]
    }

    /// Selects row `row` of `pane` (the first line shown of a text pane).
    pub fn select(&mut self, pane: Pane, row: usize) {
        self.view_mut(pane).select(row);
    }

    /// What a key of `pane` needs beyond the pane's own state: its row count, a page, how far
    /// its columns scroll at its width on the last screen.
    fn room(&self, pane: Pane) -> Room {
        let rows = Some(self.row_count(pane)).filter(|&n| n != usize::MAX);
        Room { rows, page: self.page, max_hscroll: self.max_hscroll(pane) }
    }

    /// The selected finding of the Findings pane (its filter applied).
    pub fn selected_finding(&self) -> Option<&Finding> {
        let i = *self.data.rows.findings.get(self.selected_row(Pane::Findings))?;
        self.data.findings.get(i)
    }

    /// The popups, prompts and views over the panes, bottom first.
    pub fn popups(&self) -> &Stack {
        &self.popups
    }

    /// True when a layer of `kind` is open.
    pub fn is_open(&self, kind: Kind) -> bool {
        self.popups.is_open(kind)
    }

    /// The open Playbook view.
    pub fn playbook(&self) -> Option<&crate::ui::popups::playbook::PlaybookUi> {
        self.popups.playbook()
    }

    /// The selected node, pod or volume index of the focused list pane.
    pub fn selected_in(&self, pane: Pane) -> Option<usize> {
        let sel = self.selected_row(pane);
        match pane {
            Pane::Nodes => self.data.rows.nodes.get(sel).copied(),
            Pane::Pods => self.data.rows.pods.get(sel).copied(),
            Pane::Volumes => self.data.rows.volumes.get(sel).copied(),
            _ => None,
        }
    }

    /// Updates the subject from the focused list pane and asks Ceph about its image if needed.
    pub(super) fn follow_selection(&mut self) -> Vec<Effect> {
        let subject = match self.focus {
            Pane::Findings => self.selected_finding().map(subject_of_finding),
            Pane::Nodes => self
                .selected_in(Pane::Nodes)
                .map(|i| Subject::Node(self.data.snap.nodes[i].metadata.name.clone().unwrap_or_default())),
            Pane::Pods => self.selected_in(Pane::Pods).map(|i| Subject::Pod(key_of(&self.data.snap.pods[i].metadata))),
            Pane::Volumes => {
                self.selected_in(Pane::Volumes).map(|i| Subject::Volume(self.data.lineage.volumes[i].pv.clone()))
            }
            _ => None,
        };
        match subject {
            Some(s) if s != self.subject => {
                self.subject = s;
                self.select(Pane::Ceph, 0);
                self.select(Pane::Events, 0);
                let mut fx = self.request_image(false);
                if self.data.snap.ceph.blocklist.is_none() {
                    fx.extend(self.request_blocklist());
                }
                fx
            }
            Some(_) => self.request_image(false),
            None => vec![],
        }
    }

    fn drill(&mut self) -> Vec<Effect> {
        let from = (self.focus, self.selected_row(self.focus));
        match self.focus {
            Pane::Pods => {
                let Some(i) = self.selected_in(Pane::Pods) else { return vec![] };
                let key = key_of(&self.data.snap.pods[i].metadata);
                let Some(pv) = self.data.lineage.volumes_of_pod(&key).next().map(|v| v.pv.clone()) else {
                    return vec![];
                };
                if !self.view(Pane::Volumes).filter().is_empty() {
                    self.view_mut(Pane::Volumes).clear_filter();
                    self.recompute_rows();
                }
                let Some(vi) = self.data.lineage.volumes.iter().position(|v| v.pv == pv) else { return vec![] };
                let Some(row) = self.data.rows.volumes.iter().position(|&r| r == vi) else { return vec![] };
                self.back_stack.push(from);
                self.focus = Pane::Volumes;
                self.select(Pane::Volumes, row);
                self.follow_selection()
            }
            Pane::Volumes => {
                self.back_stack.push(from);
                self.focus = Pane::Ceph;
                self.request_image(false)
            }
            Pane::Nodes => {
                let Some(i) = self.selected_in(Pane::Nodes) else { return vec![] };
                let name = self.data.snap.nodes[i].metadata.name.clone().unwrap_or_default();
                self.back_stack.push(from);
                self.focus = Pane::Pods;
                self.set_focused_filter(&name);
                self.follow_selection()
            }
            Pane::Ceph => {
                self.back_stack.push(from);
                self.focus = Pane::Events;
                vec![]
            }
            Pane::Findings => {
                if self.selected_finding().is_some() {
                    self.popups.push(Popup::Detail(FindingDetail::new()));
                }
                vec![]
            }
            Pane::Events => vec![],
        }
    }

    fn back(&mut self) {
        if let Some((pane, sel)) = self.back_stack.pop() {
            self.focus = pane;
            self.select(pane, sel);
        } else if self.focus_has_filter() && !self.focused_filter().is_empty() {
            self.set_focused_filter("");
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
