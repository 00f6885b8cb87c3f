//! The `:` command prompt, k9s style: `:pod`, `:node`, `:pvc`, `:pv`, `:va`, `:findings`,
//! `:ceph`, `:events`, `:ns NAME` (`:ns` alone clears), `:ctx`, `:q`. Enter runs, Esc or Ctrl-C
//! cancels, Tab completes a unique prefix; an unknown command is one line in the banner.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Effect, Pane};
use super::confirm::{edit_field, one_line_field};

/// Every command with its aliases (first is the name shown), and what it does.
pub const COMMANDS: &[(&[&str], &str)] = &[
    (&["pods", "pod", "po"], "Pods pane"),
    (&["nodes", "node", "no"], "Nodes pane"),
    (&["pvc", "pvcs", "persistentvolumeclaims"], "Volumes pane (PVC → PV → image)"),
    (&["pv", "pvs", "persistentvolumes"], "Volumes pane"),
    (&["va", "volumeattachments", "volumeattachment"], "Volumes pane (ATTACHED column)"),
    (&["findings", "finding", "f"], "Findings pane"),
    (&["ceph"], "Ceph pane"),
    (&["events", "event", "ev"], "Events pane"),
    (&["ns", "namespace"], "show one namespace (:ns alone: all)"),
    (&["ctx", "context"], "the kubeconfig context"),
    (&["q", "quit", "q!"], "quit"),
];

/// What a command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Focus a pane.
    Focus(Pane),
    /// Show only this namespace (`None`: all the console reads).
    Namespace(Option<String>),
    /// Say which context the console is on.
    Context,
    /// Leave.
    Quit,
}

/// Parses a command line (without the `:`); the error is the line to show.
pub fn parse(line: &str) -> Result<Command, String> {
    let mut words = line.split_whitespace();
    let Some(cmd) = words.next() else { return Err(String::new()) };
    let arg = words.next();
    let is = |names: &[&str]| names.contains(&cmd.to_lowercase().as_str());
    let no_arg = |c: Command| match arg {
        Some(a) => Err(format!(":{cmd} takes no argument (got `{a}`)")),
        None => Ok(c),
    };
    if is(COMMANDS[0].0) {
        return no_arg(Command::Focus(Pane::Pods));
    }
    if is(COMMANDS[1].0) {
        return no_arg(Command::Focus(Pane::Nodes));
    }
    if is(COMMANDS[2].0) || is(COMMANDS[3].0) || is(COMMANDS[4].0) {
        return no_arg(Command::Focus(Pane::Volumes));
    }
    if is(COMMANDS[5].0) {
        return no_arg(Command::Focus(Pane::Findings));
    }
    if is(COMMANDS[6].0) {
        return no_arg(Command::Focus(Pane::Ceph));
    }
    if is(COMMANDS[7].0) {
        return no_arg(Command::Focus(Pane::Events));
    }
    if is(COMMANDS[8].0) {
        return Ok(Command::Namespace(arg.filter(|a| !matches!(*a, "all" | "-A" | "*")).map(str::to_string)));
    }
    if is(COMMANDS[9].0) {
        return match arg {
            None => Ok(Command::Context),
            Some(_) => Err(":ctx NAME: switching contexts needs a restart: unstick --context NAME".into()),
        };
    }
    if is(COMMANDS[10].0) {
        return no_arg(Command::Quit);
    }
    Err(format!(
        "unknown command :{} (try :pod :node :pv :va :findings :ns NAME :ctx :q; ? lists all)",
        crate::text::sanitize(cmd)
    ))
}

/// The unique completion of `prefix` among the command names, if any.
pub fn complete(prefix: &str) -> Option<&'static str> {
    let p = prefix.trim().to_lowercase();
    if p.is_empty() || p.contains(' ') {
        return None;
    }
    let hits: Vec<&'static str> =
        COMMANDS.iter().filter(|(names, _)| names.iter().any(|n| n.starts_with(&p))).map(|(n, _)| n[0]).collect();
    match hits[..] {
        [one] => Some(one),
        _ => None,
    }
}

impl App {
    /// `:` opens the prompt.
    pub(crate) fn open_command(&mut self) {
        self.command = Some(one_line_field());
    }

    /// A raw key while the prompt is open.
    pub(crate) fn command_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(field) = self.command.as_mut() else { return vec![] };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => self.command = None,
            KeyCode::Char('c') if ctrl => self.command = None,
            KeyCode::Tab => {
                let line = field.lines().join("");
                if let Some(c) = complete(&line) {
                    let mut t = one_line_field();
                    t.insert_str(format!("{c} "));
                    *field = t;
                }
            }
            KeyCode::Enter => {
                let line = field.lines().join("");
                self.command = None;
                return self.run_command(&line);
            }
            _ => edit_field(field, key),
        }
        vec![]
    }

    fn run_command(&mut self, line: &str) -> Vec<Effect> {
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
            Command::Quit => self.quit = true,
            Command::Context => {
                self.remedy.notice = Some(format!(
                    "context {} (to switch: restart with --context NAME)",
                    crate::text::sanitize(&self.context)
                ))
            }
            Command::Namespace(ns) => self.set_namespace_view(ns),
            Command::Focus(p) => {
                self.finding_detail = None;
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
                w = crate::text::sanitize(w),
                n = crate::text::sanitize(n)
            ));
            return;
        }
        self.filters.namespace = ns.filter(|n| watched.as_deref() != Some(n.as_str()));
        for p in [Pane::Pods, Pane::Volumes] {
            self.selected[p.index()] = 0;
        }
        self.recompute_rows();
        if let Some(n) = &self.filters.namespace
            && !self.snap.pods.iter().any(|p| p.metadata.namespace.as_deref() == Some(n))
        {
            self.remedy.notice =
                Some(format!("no pods in namespace {} (yet): :ns alone shows all", crate::text::sanitize(n)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k9s_commands_parse() {
        assert_eq!(parse("po"), Ok(Command::Focus(Pane::Pods)));
        assert_eq!(parse("pods"), Ok(Command::Focus(Pane::Pods)));
        assert_eq!(parse("no"), Ok(Command::Focus(Pane::Nodes)));
        assert_eq!(parse("pvc"), Ok(Command::Focus(Pane::Volumes)));
        assert_eq!(parse("PV"), Ok(Command::Focus(Pane::Volumes)));
        assert_eq!(parse("va"), Ok(Command::Focus(Pane::Volumes)));
        assert_eq!(parse("findings"), Ok(Command::Focus(Pane::Findings)));
        assert_eq!(parse(" ns  prod "), Ok(Command::Namespace(Some("prod".into()))));
        assert_eq!(parse("ns"), Ok(Command::Namespace(None)));
        assert_eq!(parse("ctx"), Ok(Command::Context));
        assert_eq!(parse("q"), Ok(Command::Quit));
        assert!(parse("podz").unwrap_err().starts_with("unknown command :podz"));
        assert!(parse("pod x").is_err());
        assert!(parse("ctx other").unwrap_err().contains("restart"));
    }

    #[test]
    fn tab_completes_a_unique_prefix_only() {
        assert_eq!(complete("fi"), Some("findings"));
        assert_eq!(complete("ev"), Some("events"));
        assert_eq!(complete("p"), None, "pods, pvc, pv");
        assert_eq!(complete("ns x"), None);
    }
}
