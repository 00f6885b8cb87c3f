//! The `:` prompt's commands run on the app: focus a pane, show one namespace, name the
//! context, quit. The prompt itself (commands, parsing, keys) is `command.rs`.

use super::{App, Effect, Pane};
use crate::ui::popups::command::{Command, parse};

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
            Command::Namespace(ns) => self.set_namespace_view(ns),
            Command::Focus(p) => {
                self.popups.close(crate::ui::popups::Kind::Detail);
                self.focus = p;
                return self.follow_selection();
            }
        }
        vec![]
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

    /// `:ctx NAME`: the console quits as `q` does (asking first while a step runs), the session
    /// log saying why, and `main` starts it again on `name`.
    fn switch_context(&mut self, name: String) {
        let s = unstick_core::text::sanitize;
        if name == self.context {
            self.remedy.notice = Some(format!("already on context {}", s(&name)));
        } else if !self.contexts.contains(&name) {
            self.remedy.notice = Some(format!("no context {} in the kubeconfig; {}", s(&name), self.contexts_line()));
        } else {
            let text = format!("context switch: {} → {} (the console restarts on it)", self.context, name);
            self.record_event(unstick_core::session::SessionEvent::Note { text });
            self.switch_to = Some(name);
            self.request_quit();
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
