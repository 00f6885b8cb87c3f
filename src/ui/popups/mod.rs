//! Everything drawn over the panes, as one stack: the help, the filter and `:` prompts, the note
//! editor, the describe / YAML popup, the finding detail, the Playbook view and, over it, its
//! confirm popup and its typed-override and full-copy prompts, the training screens, the fleet
//! view and the quit confirmation. Each is a
//! component in its own file or folder (state, keys answered with an
//! [`crate::ui::outcome::Outcome`], drawing); none of them knows the app.
//!
//! The [`Stack`] is the one order they are in: key routing (`App::key`) offers a key to the top
//! layer first and goes down only past a layer that lets keys through (the help over the panes),
//! the mouse wheel is a key to the same top layer, and drawing walks the stack bottom to top
//! (`view::draw`). A prompt on top therefore receives every key: nothing under it sees a letter
//! typed into it.

pub mod command;
pub mod confirm;
pub mod describe;
pub mod export_prompt;
pub mod filter;
pub mod finding_detail;
pub mod fleet;
pub mod help;
pub mod help_rows;
pub mod note;
pub mod override_prompt;
pub mod playbook;
pub mod quit;
pub mod training;

use command::CommandPrompt;
use confirm::ConfirmUi;
use describe::DescribeUi;
use export_prompt::ExportPrompt;
use filter::FilterPrompt;
use finding_detail::FindingDetail;
use fleet::FleetView;
use help::Help;
use note::NoteUi;
use override_prompt::OverridePrompt;
use playbook::PlaybookUi;
use quit::QuitConfirm;
use training::TrainingScreen;

/// One layer of the stack.
#[derive(Debug, Clone)]
pub enum Popup {
    /// The help overlay (`?`).
    Help(Help),
    /// The filter prompt of the focused pane (`/`).
    Filter(FilterPrompt),
    /// The `:` command prompt.
    Command(CommandPrompt),
    /// The note editor (`n`).
    Note(NoteUi),
    /// The describe / YAML popup (`d` / `y`).
    Describe(DescribeUi),
    /// The finding detail (Enter on a finding).
    Detail(FindingDetail),
    /// The Playbook view of a finding (`p`).
    Playbook(Box<PlaybookUi>),
    /// The confirm-before-act popup over the Playbook view (the worker asked for a confirmation).
    Confirm(Box<ConfirmUi>),
    /// The typed-override prompt over the Playbook view (`o` after a refusal).
    Override(OverridePrompt),
    /// The full-copy destination prompt over the Playbook view (`e` on the Backup step).
    FullCopy(ExportPrompt),
    /// A training screen: briefing, hints or debrief.
    Training(TrainingScreen),
    /// "Quit while a step runs?"
    Quit(QuitConfirm),
    /// The fleet view (`:fleet`).
    Fleet(FleetView),
}

/// Which component a layer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// [`Popup::Help`].
    Help,
    /// [`Popup::Filter`].
    Filter,
    /// [`Popup::Command`].
    Command,
    /// [`Popup::Note`].
    Note,
    /// [`Popup::Describe`].
    Describe,
    /// [`Popup::Detail`].
    Detail,
    /// [`Popup::Playbook`].
    Playbook,
    /// [`Popup::Confirm`].
    Confirm,
    /// [`Popup::Override`].
    Override,
    /// [`Popup::FullCopy`].
    FullCopy,
    /// [`Popup::Training`].
    Training,
    /// [`Popup::Quit`].
    Quit,
    /// [`Popup::Fleet`].
    Fleet,
}

impl Popup {
    /// Which component this is.
    pub fn kind(&self) -> Kind {
        match self {
            Popup::Help(_) => Kind::Help,
            Popup::Filter(_) => Kind::Filter,
            Popup::Command(_) => Kind::Command,
            Popup::Note(_) => Kind::Note,
            Popup::Describe(_) => Kind::Describe,
            Popup::Detail(_) => Kind::Detail,
            Popup::Playbook(_) => Kind::Playbook,
            Popup::Confirm(_) => Kind::Confirm,
            Popup::Override(_) => Kind::Override,
            Popup::FullCopy(_) => Kind::FullCopy,
            Popup::Training(_) => Kind::Training,
            Popup::Quit(_) => Kind::Quit,
            Popup::Fleet(_) => Kind::Fleet,
        }
    }

    /// True when a key this layer does not use goes on to the layer under it (only the help over
    /// the panes or the finding detail: their keys still act under it); every other layer keeps
    /// the keys it does not use.
    pub fn passes_keys(&self) -> bool {
        matches!(self, Popup::Help(h) if h.passes_keys())
    }

    /// True for the popups of the Playbook view (they close with it).
    pub fn is_playbooks(&self) -> bool {
        matches!(self, Popup::Confirm(_) | Popup::Override(_) | Popup::FullCopy(_))
    }

    /// True while the layer has a text field with the keys (the wheel then does nothing: it never
    /// edits text).
    pub fn takes_text(&self) -> bool {
        matches!(
            self,
            Popup::Filter(_)
                | Popup::Command(_)
                | Popup::Note(_)
                | Popup::Confirm(_)
                | Popup::Override(_)
                | Popup::FullCopy(_)
        )
    }
}

/// The layers over the panes, bottom first.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    layers: Vec<Popup>,
}

impl Stack {
    /// Puts `p` on top.
    pub fn push(&mut self, p: Popup) {
        self.layers.push(p);
    }

    /// Number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// True when nothing covers the panes.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// The layers, bottom first (drawing order).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Popup> {
        self.layers.iter()
    }

    /// The layer at `i` (0: the bottom one).
    pub fn get(&self, i: usize) -> Option<&Popup> {
        self.layers.get(i)
    }

    /// The layer at `i`, to change.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Popup> {
        self.layers.get_mut(i)
    }

    /// The top layer.
    pub fn top(&self) -> Option<&Popup> {
        self.layers.last()
    }

    /// Removes the layer at `i` (nothing when there is none); a Playbook view goes with the
    /// popups over it that are its own (confirm, override, full copy).
    pub fn remove(&mut self, i: usize) -> Option<Popup> {
        let p = (i < self.layers.len()).then(|| self.layers.remove(i))?;
        if p.kind() == Kind::Playbook {
            let mut at = 0;
            self.layers.retain(|l| {
                at += 1;
                at <= i || !l.is_playbooks()
            });
        }
        Some(p)
    }

    /// Removes the topmost layer of `kind`, if one is open.
    pub fn close(&mut self, kind: Kind) -> Option<Popup> {
        let i = self.layers.iter().rposition(|p| p.kind() == kind)?;
        self.remove(i)
    }

    /// Index of the topmost layer of `kind`.
    pub fn position(&self, kind: Kind) -> Option<usize> {
        self.layers.iter().rposition(|p| p.kind() == kind)
    }

    /// True when a layer of `kind` is open.
    pub fn is_open(&self, kind: Kind) -> bool {
        self.position(kind).is_some()
    }

    /// The open Playbook view.
    pub fn playbook(&self) -> Option<&PlaybookUi> {
        self.layers.iter().rev().find_map(|p| match p {
            Popup::Playbook(pb) => Some(&**pb),
            _ => None,
        })
    }

    /// The open Playbook view, to change.
    pub fn playbook_mut(&mut self) -> Option<&mut PlaybookUi> {
        self.layers.iter_mut().rev().find_map(|p| match p {
            Popup::Playbook(pb) => Some(&mut **pb),
            _ => None,
        })
    }

    /// The open confirm popup.
    pub fn confirm(&self) -> Option<&ConfirmUi> {
        self.layers.iter().rev().find_map(|p| match p {
            Popup::Confirm(c) => Some(&**c),
            _ => None,
        })
    }

    /// The open full-copy prompt.
    pub fn full_copy(&self) -> Option<&ExportPrompt> {
        self.layers.iter().rev().find_map(|p| match p {
            Popup::FullCopy(e) => Some(e),
            _ => None,
        })
    }

    /// The open finding detail.
    pub fn detail(&self) -> Option<&FindingDetail> {
        self.layers.iter().rev().find_map(|p| match p {
            Popup::Detail(d) => Some(d),
            _ => None,
        })
    }

    /// The open describe / YAML popup.
    pub fn describe(&self) -> Option<&DescribeUi> {
        self.layers.iter().rev().find_map(|p| match p {
            Popup::Describe(d) => Some(d),
            _ => None,
        })
    }

    /// The open describe / YAML popup, to change.
    pub fn describe_mut(&mut self) -> Option<&mut DescribeUi> {
        self.layers.iter_mut().rev().find_map(|p| match p {
            Popup::Describe(d) => Some(d),
            _ => None,
        })
    }

    /// The open note editor, to change.
    pub fn note_mut(&mut self) -> Option<&mut NoteUi> {
        self.layers.iter_mut().rev().find_map(|p| match p {
            Popup::Note(n) => Some(n),
            _ => None,
        })
    }

    /// The open training screen.
    pub fn training(&self) -> Option<&TrainingScreen> {
        self.layers.iter().rev().find_map(|p| match p {
            Popup::Training(s) => Some(s),
            _ => None,
        })
    }

    /// The open filter or `:` prompt's text.
    pub fn prompt_text(&self, kind: Kind) -> Option<String> {
        self.layers.iter().rev().find_map(|p| match p {
            Popup::Filter(f) if kind == Kind::Filter => Some(f.text()),
            Popup::Command(c) if kind == Kind::Command => Some(c.text()),
            _ => None,
        })
    }
}

#[cfg(test)]
#[path = "stack_tests.rs"]
mod tests;
