//! The `:` prompt's commands run on the app: focus a pane, show one namespace, name or switch
//! the context, quit. The prompt itself (commands, parsing, keys) is `command.rs`.

use super::{App, CephStatus, Effect, Pane, Subject};
use crate::ui::panes::state::PaneView;
use crate::ui::popups::command::{Command, parse};
use crate::ui::popups::playbook::RemedyUi;
use unstick_core::sources::kube::{SourceState, WatchedKind};

impl App {
    /// Runs a command line (its prompt is closed): an error is one line in the banner.
    pub(super) fn run_command(&mut self, line: &str) -> Vec<Effect> {
        let cmd = match parse(line) {
            Ok(c) => c,
            Err(e) if e.is_empty() => return vec![],
            Err(e) => {
                self.remedy.notice = Some(e);
                return vec![];
            }
        };
        self.remedy.notice = None;
        match cmd {
            Command::Quit => self.request_quit(),
            Command::Context => self.remedy.notice = Some(self.contexts_line()),
            Command::SwitchContext(name) => self.switch_context(name),
            Command::Fleet => return self.open_fleet(),
            Command::Namespace(ns) => self.set_namespace_view(ns),
            Command::Focus(p) => {
                self.popups.close(crate::ui::popups::Kind::Detail);
                self.focus = p;
                return self.follow_selection();
            }
        }
        vec![]
    }

    /// Opens the fleet view (`:fleet`, `--fleet`) and asks for the fleet diagnosis that fills it.
    pub fn open_fleet(&mut self) -> Vec<Effect> {
        self.popups.push(crate::ui::popups::Popup::Fleet(crate::ui::popups::fleet::FleetView::new(&self.context)));
        vec![Effect::Fleet]
    }

    /// `context a; contexts: a, b, c (:ctx NAME switches)`.
    fn contexts_line(&self) -> String {
        let s = unstick_core::text::sanitize;
        match self.contexts.as_slice() {
            [] => format!("context {} (no other contexts known)", s(&self.context)),
            all => format!(
                "context {}; contexts: {} (:ctx NAME switches, Tab completes)",
                s(&self.context),
                all.iter().map(|c| s(c)).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// `:ctx NAME`: the event loop ends as on `q` (asking first only while a step runs) with
    /// [`App::switch_to`] set; the console then closes this context's sources and starts NAME's
    /// ([`crate::cmd::console`]), and [`App::switched_context`] starts the panes afresh.
    pub(crate) fn switch_context(&mut self, name: String) {
        let s = unstick_core::text::sanitize;
        if name == self.context {
            self.remedy.notice = Some(format!("already on context {}", s(&name)));
        } else if !self.contexts.contains(&name) {
            self.remedy.notice = Some(format!("no context {} in the kubeconfig; {}", s(&name), self.contexts_line()));
        } else {
            self.switch_to = Some(name);
            self.request_switch();
        }
    }

    /// The console now reads context `to` (its sources just started): the old context's
    /// objects, findings, selections, popups and playbook runs are dropped, the kinds are
    /// Connecting again, and the session log records the switch (not a restart on the same context,
    /// after a switch that failed). The session log, the write
    /// mode, the interrupted steps and the pane focus stay.
    pub fn switched_context(&mut self, to: String) {
        let from = std::mem::replace(&mut self.context, to.clone());
        self.data = Default::default();
        self.kube_state = WatchedKind::ALL.iter().map(|k| (*k, SourceState::Connecting)).collect();
        self.ceph = CephStatus { enabled: self.ceph.enabled, ..Default::default() };
        self.views = Pane::ALL.map(PaneView::new);
        self.subject = Subject::None;
        self.back_stack.clear();
        self.namespace_view = None;
        self.popups = Default::default();
        let interrupted = std::mem::take(&mut self.remedy.interrupted);
        self.remedy = RemedyUi::new(self.remedy.mode);
        self.remedy.interrupted = interrupted;
        self.quit = false;
        self.switch_to = None;
        self.remedy.notice = Some(format!(
            "context {}: reading it (the Lease and journal of {} were closed)",
            unstick_core::text::sanitize(&to),
            unstick_core::text::sanitize(&from)
        ));
        if from != to {
            self.record_event(unstick_core::session::SessionEvent::ContextSwitch { from, to });
        }
    }

    /// `:ns NAME` shows only that namespace's pods and claims; `:ns` shows all the console reads.
    /// The console reads one namespace when started with `-n`: then another one cannot be shown.
    fn set_namespace_view(&mut self, ns: Option<String>) {
        let watched = (self.namespace != "all").then(|| self.namespace.clone());
        if let (Some(w), Some(n)) = (&watched, &ns)
            && w != n
        {
            self.remedy.notice = Some(format!(
                "the console reads only namespace {w}: restart with -n {n} or -A to see {n}",
                w = unstick_core::text::sanitize(w),
                n = unstick_core::text::sanitize(n)
            ));
            return;
        }
        self.namespace_view = ns.filter(|n| watched.as_deref() != Some(n.as_str()));
        for p in [Pane::Pods, Pane::Volumes] {
            self.select(p, 0);
        }
        self.recompute_rows();
        if let Some(n) = &self.namespace_view
            && !self.data.snap.pods.iter().any(|p| p.metadata.namespace.as_deref() == Some(n))
        {
            self.remedy.notice =
                Some(format!("no pods in namespace {} (yet): :ns alone shows all", unstick_core::text::sanitize(n)));
        }
    }
}
