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
            Command::Context => {
                self.remedy.notice = Some(format!(
                    "context {} (to switch: restart with --context NAME)",
                    unstick_core::text::sanitize(&self.context)
                ))
            }
            Command::Namespace(ns) => self.set_namespace_view(ns),
            Command::Focus(p) => {
                self.popups.close(crate::ui::popups::Kind::Detail);
                self.focus = p;
                return self.follow_selection();
            }
        }
        vec![]
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
