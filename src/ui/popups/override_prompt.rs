//! The typed-override prompt (`o` in the Playbook view after a refusal that can be overridden:
//! fence a Ready node, a blocklist entry without a nonce, unfence a node not shown to reboot). A
//! layer of its own over the Playbook view: Enter with the name typed exactly answers
//! [`AppCommand::Override`], which the view under it records for the next preparation of the step;
//! Esc or Ctrl-C cancels.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui_textarea::TextArea;

use crate::theme::Theme;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::popups::confirm::{PromptFrame, draw_prompt, edit_field, one_line_field};
use unstick_core::remedy::service::OverrideNeed;

/// The prompt's state.
#[derive(Debug, Clone)]
pub struct OverridePrompt {
    /// What must be typed.
    pub need: OverrideNeed,
    /// The field.
    pub input: TextArea<'static>,
    /// Why the last attempt was refused.
    pub error: Option<String>,
}

impl OverridePrompt {
    /// An empty prompt for `need`.
    pub fn new(need: OverrideNeed) -> Self {
        OverridePrompt { need, input: one_line_field(), error: None }
    }

    /// The prompt's answer to a key: [`AppCommand::Override`] when Enter finds the name typed
    /// exactly, [`AppCommand::Close`] on Esc or Ctrl-C; every other key edits the field.
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        match key.code {
            _ if ctrl_c => Outcome::Command(AppCommand::Close),
            KeyCode::Esc => Outcome::Command(AppCommand::Close),
            KeyCode::Enter => {
                let typed = self.input.lines().join("").trim().to_string();
                if typed != self.need.name() {
                    self.error = Some(format!("type `{}` exactly to override", self.need.name()));
                    return Outcome::Consumed;
                }
                Outcome::Command(AppCommand::Override(self.need.clone()))
            }
            _ => {
                edit_field(&mut self.input, key);
                Outcome::Consumed
            }
        }
    }

    /// Draws the prompt over `area`.
    pub fn draw(&self, f: &mut Frame, area: Rect, t: &Theme) {
        draw_override(f, t, self, area)
    }
}

fn draw_override(f: &mut Frame, t: &Theme, o: &OverridePrompt, area: Rect) {
    let what = match &o.need {
        OverrideNeed::ReadyNode(n) => {
            format!("Node {n} is Ready: fencing it cuts off a live node.")
        }
        OverrideNeed::WideBlocklist(a) => {
            format!("{a} has no nonce: it blocks EVERY client on that host.")
        }
        OverrideNeed::NotRebooted(n) => {
            format!("Node {n} has not been shown to reboot since its fence: its old clients may write again.")
        }
        OverrideNeed::FeatureGate(g) => {
            format!(
                "On 1.24–1.25 the out-of-service taint works only with kube-controller-manager's --feature-gates={g}=true."
            )
        }
        OverrideNeed::Unattributed(a) => {
            format!("No proof ties {a} to a node: fencing it may cut off some other client.")
        }
        OverrideNeed::Remediating(n) => {
            format!("An automatic remediator (Medik8s) acts on node {n}: acting there now races it.")
        }
    };
    let frame = PromptFrame {
        title: "OVERRIDE a safety rule",
        max_width: 90,
        what: Line::styled(what, t.warn),
        how: format!("Type `{}` then Enter to override · Esc cancel", o.need.name()),
        field: &o.input,
        error: o.error.as_deref(),
    };
    draw_prompt(f, t, area, frame);
}
