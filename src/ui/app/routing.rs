//! Where a key goes: down the popup stack from its top ([`crate::ui::popups::Stack`]) until a
//! layer answers it, then to the focused pane; and what the answers ([`AppCommand`]s) do. A layer
//! keeps every key it does not use (only the help over the panes lets them through), so a prompt
//! on top receives every key and nothing under it sees a letter typed into it.

use crossterm::event::KeyEvent;

use super::{App, Effect, Pane};
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::popups::command::CommandPrompt;
use crate::ui::popups::export_prompt::ExportPrompt;
use crate::ui::popups::filter::FilterPrompt;
use crate::ui::popups::help::Help;
use crate::ui::popups::note::NoteUi;
use crate::ui::popups::override_prompt::OverridePrompt;
use crate::ui::popups::playbook::PlaybookCtx;
use crate::ui::popups::quit::QuitConfirm;
use crate::ui::popups::{Kind, Popup};

impl App {
    /// A key press, as the terminal delivers it (the run loop, the mouse wheel and the tests all
    /// come here): the popup stack's top layer answers it, or lets it through to the layer under
    /// it; under the stack the focused pane's binding ([`crate::ui::keys::map`]) acts.
    pub fn key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let mut i = self.popups.len();
        while i > 0 {
            i -= 1;
            match self.layer_key(i, key) {
                Outcome::Ignored if self.popups.get(i).is_some_and(Popup::passes_keys) => continue,
                Outcome::Ignored | Outcome::Consumed => return vec![],
                Outcome::Command(c) => return self.answered(i, c),
            }
        }
        match crate::ui::keys::map(key) {
            Some(a) => self.act(a),
            None => vec![],
        }
    }

    /// What the Playbook view may do in this console.
    pub(crate) fn playbook_ctx(&self) -> PlaybookCtx {
        PlaybookCtx { mode: self.remedy.mode, worker: self.remedy.worker, training: self.training.is_some() }
    }

    /// Layer `i`'s answer to `key`, with what it needs of the app's state.
    fn layer_key(&mut self, i: usize, key: KeyEvent) -> Outcome {
        let body = self.body_area();
        let now = self.now;
        let ctx = self.playbook_ctx();
        let finding = self.data.rows.findings.get(self.selected_row(Pane::Findings)).copied();
        let Some(layer) = self.popups.get_mut(i) else { return Outcome::Ignored };
        match layer {
            Popup::Help(h) => h.handle_key(key),
            Popup::Filter(p) => p.handle_key(key),
            Popup::Command(p) => p.handle_key(key),
            Popup::Note(n) => n.handle_key(key),
            Popup::Quit(q) => q.handle_key(key),
            Popup::Fleet(v) => v.handle_key(key),
            Popup::Describe(d) => {
                let metrics = d.metrics(body, &self.data.snap.events, now);
                d.handle_key(key, metrics)
            }
            Popup::Detail(d) => match (finding.and_then(|i| self.data.findings.get(i)), crate::ui::keys::map(key)) {
                // the finding is gone: the overlay closes
                (None, _) => Outcome::Command(AppCommand::Close),
                (Some(f), Some(a)) => d.handle_key(a, f),
                (Some(_), None) => Outcome::Consumed,
            },
            Popup::Playbook(pb) => pb.handle_key(key, ctx),
            Popup::Confirm(c) => {
                let metrics = c.metrics(body, &self.theme);
                c.handle_key(key, now, metrics)
            }
            Popup::Override(o) => o.handle_key(key),
            Popup::FullCopy(e) => e.handle_key(key),
            Popup::Training(s) => match self.training.as_mut() {
                Some(tr) => s.handle_key(key, now, tr),
                None => Outcome::Command(AppCommand::Close),
            },
        }
    }

    /// Applies what layer `i` answered: closing it (and what closing means for it), else the
    /// command ([`App::apply_command`]).
    fn answered(&mut self, i: usize, c: AppCommand) -> Vec<Effect> {
        let kind = self.popups.get(i).map(Popup::kind);
        if self.popups.get(i).is_some_and(Popup::is_playbooks) {
            return self.playbook_popup_answered(i, c);
        }
        match c {
            AppCommand::Close => match self.popups.remove(i) {
                Some(Popup::Playbook(pb)) => self.closed_playbook(*pb),
                // staying: a `:ctx NAME` that asked to quit is off too
                Some(Popup::Quit(_)) => {
                    self.switch_to = None;
                    vec![]
                }
                _ => vec![],
            },
            AppCommand::Quit if kind == Some(Kind::Quit) => {
                self.quit = true;
                vec![]
            }
            AppCommand::Filter { text, close } => {
                if close {
                    self.popups.remove(i);
                }
                self.set_focused_filter(&text);
                self.follow_selection()
            }
            AppCommand::RunCommand(line) => {
                self.popups.remove(i);
                self.run_command(&line)
            }
            AppCommand::JumpTo(o) => {
                self.popups.remove(i);
                self.jump_to(&o)
            }
            AppCommand::ClockStarted(at) => {
                // the briefing was left: the simulation runs
                self.popups.remove(i);
                self.now = at;
                vec![]
            }
            c => self.apply_command(c),
        }
    }

    /// A popup of the Playbook view (layer `i`: confirm, override, full copy) answered `c`: it
    /// closes, and the view under it takes the answer.
    fn playbook_popup_answered(&mut self, i: usize, c: AppCommand) -> Vec<Effect> {
        let mode = self.remedy.mode;
        let Some(layer) = self.popups.remove(i) else { return vec![] };
        let Some(pb) = self.popups.playbook_mut() else { return vec![] };
        let answer = match (layer, c) {
            (Popup::Confirm(ui), AppCommand::Confirm(typed)) => Some(pb.confirm_answered(&ui.view, Some(typed), mode)),
            (Popup::Confirm(ui), _) => Some(pb.confirm_answered(&ui.view, None, mode)),
            (Popup::Override(_), AppCommand::Override(need)) => {
                pb.override_typed(need);
                None
            }
            (Popup::FullCopy(_), AppCommand::StartExport(path)) => pb.full_copy_answered(Some(path)),
            (Popup::FullCopy(_), _) => pb.full_copy_answered(None),
            _ => None,
        };
        answer.map(|c| self.apply_command(c)).unwrap_or_default()
    }

    /// Applies a command a component answered (closing and what only the answering layer's
    /// place in the stack decides are [`App::answered`]'s).
    pub(crate) fn apply_command(&mut self, c: AppCommand) -> Vec<Effect> {
        match c {
            AppCommand::Quit => self.request_quit(),
            AppCommand::ClockStarted(at) => self.now = at,
            AppCommand::OpenHelp => self.open_help(),
            AppCommand::OpenNote => self.open_note(),
            AppCommand::OpenPlaybook => return self.open_playbook(),
            AppCommand::OpenDescribe { yaml: false } => return self.open_describe_view(),
            AppCommand::OpenDescribe { yaml: true } => return self.open_yaml_view(),
            AppCommand::OpenCommand => self.open_command(),
            AppCommand::SwitchContext(name) => {
                self.popups.close(Kind::Fleet);
                self.switch_context(name);
            }
            AppCommand::RefreshFleet => return vec![Effect::Fleet],
            AppCommand::OpenFilter => {
                self.popups.close(Kind::Detail);
                self.open_filter();
            }
            AppCommand::JumpTo(o) => return self.jump_to(&o),
            AppCommand::ToggleHints => self.toggle_hints(),
            AppCommand::SaveNote(text) => self.save_note(text),
            AppCommand::Remedy(r) => return vec![Effect::Remedy(r)],
            AppCommand::Describe(t) => return vec![Effect::Describe(t)],
            AppCommand::Answered { record, send } => {
                self.record_event(*record);
                return send.map(Effect::Remedy).into_iter().collect();
            }
            AppCommand::Filter { text, .. } => self.set_focused_filter(&text),
            AppCommand::RunCommand(line) => return self.run_command(&line),
            AppCommand::OpenOverride(need) => self.popups.push(Popup::Override(OverridePrompt::new(need))),
            AppCommand::OpenFullCopy(path) => self.popups.push(Popup::FullCopy(ExportPrompt::new(&path))),
            AppCommand::Copy(text) => return vec![Effect::Clipboard(text)],
            AppCommand::Close | AppCommand::StartExport(_) | AppCommand::Confirm(_) | AppCommand::Override(_) => {}
        }
        vec![]
    }

    /// `q`, Ctrl-C or `:q`: quits, unless a playbook is open (a step or a Wait in progress, or
    /// only open: `q` there is easily meant for the view, which Esc closes) or a training runs
    /// (quitting ends it without its debrief); then asks first ([`QuitConfirm`]). Over a training's
    /// debrief (which can open over the playbook whose last step met the goals) only a step in
    /// progress asks: the debrief says `q` leaves.
    pub(crate) fn request_quit(&mut self) {
        let debrief = self.training.as_ref().is_some_and(|t| matches!(t.phase, unstick_core::train::Phase::Debrief(_)));
        let what = self.popups.playbook().and_then(|pb| match pb.in_progress() {
            None if debrief => None,
            p => Some(p.unwrap_or_else(|| pb.open_at())),
        });
        match what.or_else(|| self.training_running()) {
            Some(what) if !self.popups.is_open(Kind::Quit) => self.popups.push(Popup::Quit(QuitConfirm::new(what))),
            _ => self.quit = true,
        }
    }

    /// `:ctx NAME` (with [`App::switch_to`] set): leaves this context's run at once, unless a step
    /// or a Wait is in progress; then asks first ([`QuitConfirm`]). Unlike `q`, a playbook that is
    /// only open does not ask: the command was typed whole, not one stray letter.
    pub(crate) fn request_switch(&mut self) {
        match self.popups.playbook().and_then(|pb| pb.in_progress()) {
            Some(what) if !self.popups.is_open(Kind::Quit) => self.popups.push(Popup::Quit(QuitConfirm::new(what))),
            _ => self.quit = true,
        }
    }

    /// `the training on X runs, 1 of 7 goals met` while a training scenario runs (after its
    /// briefing, before its debrief); `None` otherwise.
    pub(crate) fn training_running(&self) -> Option<String> {
        let t = self.training.as_ref().filter(|t| t.phase == unstick_core::train::Phase::Running)?;
        let met = t.goals.iter().filter(|g| **g).count();
        Some(format!("the training on {} runs, {met} of {} goals met", t.scenario.name, t.goals.len()))
    }

    /// `?`: the help of the layer on top (or the focused pane); a second `?` closes it.
    pub(crate) fn open_help(&mut self) {
        if self.popups.top().is_some_and(|p| p.kind() == Kind::Help) {
            self.popups.close(Kind::Help);
            return;
        }
        let passes = self.popups.top().is_none_or(|p| p.kind() == Kind::Detail);
        self.popups.push(Popup::Help(Help::new(passes)));
    }

    /// `/`: the focused pane's filter prompt, holding its current filter.
    pub(crate) fn open_filter(&mut self) {
        let text = self.view(self.focus).filter().text().to_string();
        self.popups.push(Popup::Filter(FilterPrompt::new(&text)));
    }

    /// `:` opens the command prompt.
    pub(crate) fn open_command(&mut self) {
        self.popups.push(Popup::Command(CommandPrompt::with_contexts(self.contexts.clone())));
    }

    /// `n` opens the note editor (once).
    pub(crate) fn open_note(&mut self) {
        if !self.popups.is_open(Kind::Note) {
            self.popups.push(Popup::Note(NoteUi::new()));
        }
    }
}
