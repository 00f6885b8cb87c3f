//! The `:` command prompt, k9s style: `:pod`, `:node`, `:pvc`, `:pv`, `:va`, `:findings`,
//! `:ceph`, `:events`, `:ns NAME` (`:ns` alone clears), `:ctx` (`:ctx NAME`: switch to NAME in place), `:fleet`, `:q`. Enter runs, Esc or Ctrl-C
//! cancels, Tab completes a unique prefix; an unknown command is one line in the banner. This file
//! holds the commands and the prompt's keys (no `App`); running a command is `app/command.rs`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use crate::theme::Theme;

use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::panes::Pane;
use crate::ui::popups::confirm::{edit_field, one_line_field};

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
    (&["ctx", "context"], "the kubeconfig contexts (:ctx NAME: switch to NAME)"),
    (&["fleet"], "every context diagnosed; Enter opens one"),
    (&["q", "quit", "q!"], "quit"),
];

/// What a command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Focus a pane.
    Focus(Pane),
    /// Show only this namespace (`None`: all the console reads).
    Namespace(Option<String>),
    /// Say which context the console is on, and list the kubeconfig's.
    Context,
    /// Switch the console to this context, in place.
    SwitchContext(String),
    /// The fleet view: every context diagnosed.
    Fleet,
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
            Some(name) => Ok(Command::SwitchContext(name.to_string())),
        };
    }
    if is(COMMANDS[10].0) {
        return no_arg(Command::Fleet);
    }
    if is(COMMANDS[11].0) {
        return no_arg(Command::Quit);
    }
    Err(format!(
        "unknown command :{} (try :pod :node :pv :va :findings :ns NAME :ctx :fleet :q; ? lists all)",
        unstick_core::text::sanitize(cmd)
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

/// The unique completion of `line` = `ctx PREFIX` (or `context PREFIX`) among `contexts`, as
/// the whole line (`ctx prod-eu-1`), if any.
pub fn complete_context(line: &str, contexts: &[String]) -> Option<String> {
    let mut words = line.split_whitespace();
    let cmd = words.next()?;
    if !COMMANDS[9].0.contains(&cmd.to_lowercase().as_str()) || words.clone().count() > 1 {
        return None;
    }
    let prefix = words.next().unwrap_or("");
    match contexts.iter().filter(|c| c.starts_with(prefix)).collect::<Vec<_>>()[..] {
        [one] => Some(format!("{cmd} {one}")),
        _ => None,
    }
}

/// The open `:` prompt.
#[derive(Debug, Clone)]
pub struct CommandPrompt {
    field: TextArea<'static>,
    /// What `:ctx` completes.
    contexts: Vec<String>,
}

impl Default for CommandPrompt {
    fn default() -> Self {
        CommandPrompt::with_contexts(vec![])
    }
}

impl CommandPrompt {
    /// An empty prompt whose `:ctx` completes among `contexts`.
    pub fn with_contexts(contexts: Vec<String>) -> Self {
        CommandPrompt { field: one_line_field(), contexts }
    }

    /// The line typed.
    pub fn text(&self) -> String {
        self.field.lines().join("")
    }

    /// The prompt's answer to a key: Enter asks to run the line ([`AppCommand::RunCommand`]; the
    /// app closes the prompt), Esc or Ctrl-C close it, Tab completes a unique prefix (of a
    /// command, or of a context after `ctx `), anything
    /// else edits. Every key is the prompt's.
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Outcome::Command(AppCommand::Close),
            KeyCode::Char('c') if ctrl => return Outcome::Command(AppCommand::Close),
            KeyCode::Tab => {
                let line = self.text();
                let done = complete_context(&line, &self.contexts).or_else(|| complete(&line).map(|c| format!("{c} ")));
                if let Some(c) = done {
                    let mut t = one_line_field();
                    t.insert_str(c);
                    self.field = t;
                }
            }
            KeyCode::Enter => return Outcome::Command(AppCommand::RunCommand(self.text())),
            _ => edit_field(&mut self.field, key),
        }
        Outcome::Consumed
    }

    /// Draws the prompt over the status line `area`.
    pub fn draw(&self, f: &mut Frame, t: &Theme, area: Rect) {
        crate::ui::view::chrome::filter_line(f, t, " :", "", &self.field, area);
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
        assert_eq!(parse("fleet"), Ok(Command::Fleet));
        assert!(parse("podz").unwrap_err().starts_with("unknown command :podz"));
        assert!(parse("pod x").is_err());
        assert_eq!(parse("ctx other"), Ok(Command::SwitchContext("other".into())));
    }

    #[test]
    fn ctx_takes_a_name_and_tab_completes_contexts() {
        assert_eq!(parse("ctx prod-b"), Ok(Command::SwitchContext("prod-b".into())));
        assert_eq!(parse("ctx"), Ok(Command::Context));
        let known = ["prod-a".to_string(), "prod-b".into(), "stage".into()];
        assert_eq!(complete_context("ctx st", &known).as_deref(), Some("ctx stage"));
        assert_eq!(complete_context("context prod-b", &known).as_deref(), Some("context prod-b"));
        assert_eq!(complete_context("ctx prod", &known), None, "two match");
        assert_eq!(complete_context("ctx ", &known), None);
        assert_eq!(complete_context("ns st", &known), None);
        let mut p = CommandPrompt::with_contexts(known.to_vec());
        for c in "ctx s".chars() {
            p.handle_key(KeyEvent::from(KeyCode::Char(c)));
        }
        p.handle_key(KeyEvent::from(KeyCode::Tab));
        assert_eq!(p.text(), "ctx stage");
    }

    #[test]
    fn tab_completes_a_unique_prefix_only() {
        assert_eq!(complete("fi"), Some("findings"));
        assert_eq!(complete("ev"), Some("events"));
        assert_eq!(complete("p"), None, "pods, pvc, pv");
        assert_eq!(complete("ns x"), None);
    }
}
