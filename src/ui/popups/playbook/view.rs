//! The Playbook view: the steps with their state, the selected step's explanation, command(s),
//! countdown, verify results and lock reason, the backup's paths and snapshot, the Lease, the
//! interrupted steps, the last result and the keys.

use jiff::Timestamp;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::theme::Theme;
use crate::ui::popups::export_prompt::{human_bytes, progress_ratio, progress_text};
use crate::ui::popups::playbook::{PlaybookUi, WriteMode, lock_reason, step_state};
use crate::ui::view::util::{fit, fit_ids, fit_middle, plain};
use unstick_core::remedy::playbook::StepKind;
use unstick_core::remedy::playbook::condition::Condition;
use unstick_core::remedy::run::backup::{ExportProgress, ManifestRef};
use unstick_core::remedy::run::{StepState, WaitStatus};
use unstick_core::remedy::service::LeaseView;
use unstick_core::text::sanitize;

/// What the Playbook view is drawn from besides its own state, for one frame (the key-side
/// settings are [`crate::ui::popups::playbook::PlaybookCtx`]).
#[derive(Clone, Copy)]
pub struct PlaybookDrawCtx<'a> {
    /// Resolved theme.
    pub theme: &'a Theme,
    /// The console's clock (a Wait step's countdown runs against it).
    pub now: Timestamp,
    /// Live, dry-run or read-only (shown in the title).
    pub mode: WriteMode,
    /// A training session is running: no full copy offered, the hints key shown.
    pub training: bool,
    /// Simulated seconds per real second in training (1 outside it); the worker counts real seconds.
    pub sim_speed: f64,
}

fn object_label(o: &ManifestRef) -> String {
    match o {
        ManifestRef::Pv(n) => format!("pv/{n}"),
        ManifestRef::Pvc(ns, n) => format!("pvc/{ns}/{n}"),
        ManifestRef::Pod(ns, n) => format!("pod/{ns}/{n}"),
        ManifestRef::VolumeAttachment(n) => format!("volumeattachment/{n}"),
        ManifestRef::DaemonSet(ns, n) => format!("daemonset/{ns}/{n}"),
    }
}

/// `[█████░░░░░]  50% 32.0 MiB / 64.0 MiB · 120.5 MiB/s · ETA 1 s` fitted to `w` columns.
fn export_bar<'a>(t: &Theme, p: &ExportProgress, w: usize) -> Line<'a> {
    let text = progress_text(p);
    let line = match progress_ratio(p) {
        Some(r) => {
            let cells = 20usize;
            let done = ((r * cells as f64).round() as usize).min(cells);
            format!("export [{}{}] {:>3.0}% {text}", "█".repeat(done), "░".repeat(cells - done), r * 100.0)
        }
        None => format!("export {text}"),
    };
    Line::styled(fit(&line, w), t.accent)
}

/// Lines about the selected step, `w` columns wide.
fn detail<'a>(cx: &PlaybookDrawCtx, pb: &PlaybookUi, w: usize) -> Vec<Line<'a>> {
    let t = cx.theme;
    let i = pb.selected;
    let Some(step) = pb.playbook.steps.get(i) else { return vec![] };
    let mut out = vec![Line::from(vec![
        plain(format!("Step {} · {} ", i + 1, step.kind.name()), t.accent),
        plain(if step.optional { "(optional) " } else { "" }, t.muted),
        plain(sanitize(&step.title), t.text),
    ])];
    if !step.explain.is_empty() {
        out.push(Line::styled(sanitize(&step.explain), t.muted));
    }
    if let Some(why) = lock_reason(pb, i) {
        out.push(Line::styled(why, t.warn));
    }
    match pb.runner.as_ref().and_then(|r| r.states.get(i)) {
        Some(StepState::Done(s)) => out.push(Line::styled(format!("done: {}", sanitize(s)), t.ok)),
        Some(StepState::Failed(s)) => out.push(Line::styled(format!("failed: {}", sanitize(s)), t.error)),
        Some(StepState::Skipped(s)) => out.push(Line::styled(format!("skipped: {}", sanitize(s)), t.muted)),
        Some(StepState::Undone(s)) => out.push(Line::styled(format!("undone: {} — run it again", sanitize(s)), t.warn)),
        _ => {}
    }
    match &step.kind {
        StepKind::Backup(plan) => {
            let objs: Vec<String> = plan.objects.iter().map(object_label).collect();
            out.push(Line::styled(format!("saves: {}", objs.join(", ")), t.text));
            if let Some(im) = &plan.image {
                out.push(Line::styled(
                    format!(
                        "snapshot: rbd snap create {}@unstick-<incident>-<UTC time>, verified by rbd snap ls",
                        im.spec()
                    ),
                    t.text,
                ));
                // offered only where it can work: the simulated Ceph of training has no data to export
                if pb.runner.as_ref().is_some_and(|r| r.backup.is_none()) && pb.export.is_none() && !cx.training {
                    out.push(Line::styled("e: also a full copy with rbd export (asks for the file)", t.muted));
                }
            }
            if let Some(p) = &pb.export {
                out.push(export_bar(t, p, w));
            }
        }
        StepKind::Act(a) => {
            out.push(Line::from(vec![plain("command: ", t.muted), plain(sanitize(&a.summary()), t.text)]))
        }
        StepKind::Manual { on, commands } => {
            // a node's shell for node commands; kubectl reads run wherever kubectl reaches the cluster
            let place = match on {
                Some(node) => format!("run on {node}"),
                None => "run where kubectl reaches the cluster".to_string(),
            };
            out.push(Line::styled(format!("{place} (c copies them to the clipboard):"), t.muted));
            out.extend(commands.iter().map(|c| Line::styled(format!("  {}", sanitize(c)), t.text)));
            // say which later step checks the result, or that nothing here does
            let checker = pb
                .playbook
                .steps
                .iter()
                .enumerate()
                .skip(i + 1)
                .find(|(_, s)| matches!(s.kind, StepKind::Verify(_) | StepKind::Wait { .. } | StepKind::Check));
            let then = match checker {
                Some((j, s)) => {
                    format!("Enter when done (journaled); step {} ({}) checks the result", j + 1, s.kind.name())
                }
                None => {
                    "Enter when done (journaled); no later step checks it: confirm the pod mounts (3 Pods, 6 Events)"
                        .into()
                }
            };
            out.push(Line::styled(then, t.muted));
        }
        StepKind::Wait { condition, timeout, .. } => {
            out.push(Line::styled(
                format!("waits for: {} (timeout {} s)", condition.describe(), timeout.as_secs()),
                t.text,
            ));
            if let Some((st, at)) = &pb.wait {
                // the worker counts real seconds; in training the console's clock is simulated time
                let speed = if cx.sim_speed > 0.0 { cx.sim_speed } else { 1.0 };
                let since = ((cx.now - *at).get_seconds().max(0) as f64 / speed) as u64;
                match st {
                    WaitStatus::Pending { seen, remaining } => out.push(Line::styled(
                        format!(
                            "waiting… {} s left · seen: {}",
                            remaining.as_secs().saturating_sub(since),
                            sanitize(seen)
                        ),
                        t.warn,
                    )),
                    WaitStatus::Met(s) => out.push(Line::styled(format!("met: {}", sanitize(s)), t.ok)),
                    WaitStatus::TimedOut(s) => out.push(Line::styled(sanitize(s), t.error)),
                }
            }
        }
        StepKind::Verify(conds) => verify_lines(cx, pb, i, conds, &mut out),
        StepKind::Check => {}
    }
    out
}

/// A Verify step's lines: each condition as last read (or what it checks), the time left while
/// the service reads them again, and how to run a failed one again.
fn verify_lines(cx: &PlaybookDrawCtx, pb: &PlaybookUi, i: usize, conds: &[Condition], out: &mut Vec<Line<'_>>) {
    let t = cx.theme;
    match pb.verified.get(&i) {
        Some(res) => out.extend(res.iter().map(|c| {
            Line::styled(
                format!("{} {}: {}", if c.holds { "✓" } else { "✗" }, sanitize(&c.condition), sanitize(&c.seen)),
                if c.holds { t.ok } else { t.error },
            )
        })),
        None => out.extend(conds.iter().map(|c| Line::styled(format!("checks: {}", c.describe()), t.text))),
    }
    let current = pb.runner.as_ref().is_some_and(|r| r.cursor == i);
    if let (true, Some((left, at))) = (pb.waiting && current, pb.verify_left) {
        // the worker counts console time; in training the console's clock is simulated time
        let since = (cx.now - at).get_seconds().max(0).unsigned_abs();
        let left = left.as_secs().saturating_sub(since);
        out.push(Line::styled(format!("not yet: read again until it holds, {left} s left (Esc stops)"), t.warn));
    } else if current && matches!(pb.runner.as_ref().and_then(|r| r.states.get(i)), Some(StepState::Failed(_))) {
        out.push(Line::styled("Enter: verify again (reads the conditions again until they hold)", t.accent));
    }
}

/// Lines about the incident: backup, Lease.
fn incident<'a>(t: &Theme, pb: &PlaybookUi) -> Vec<Line<'a>> {
    let mut out = vec![];
    let Some(r) = &pb.runner else { return out };
    if let Some(b) = &r.backup {
        out.push(Line::styled(format!("Backup: snapshot {}", b.snapshot.as_deref().unwrap_or("(no image)")), t.ok));
        // the directory once, then each file's name: a path per file wraps over three rows at 80
        // columns and the last rows were cut off (`….yam`)
        let dir = b.files.first().and_then(|f| f.path.parent());
        if let Some(dir) = dir.filter(|d| b.files.iter().all(|f| f.path.parent() == Some(*d))) {
            out.push(Line::styled(format!("  in {}:", dir.display()), t.muted));
            let names: Vec<String> =
                b.files.iter().filter_map(|f| f.path.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
            out.push(Line::styled(format!("  {}", names.join("  ")), t.muted));
        } else {
            out.extend(b.files.iter().map(|f| Line::styled(format!("  {}", f.path.display()), t.muted)));
        }
        if let Some(e) = &b.export {
            out.push(Line::styled(format!("Full copy: {} ({})", e.path.display(), human_bytes(e.bytes)), t.ok));
            out.push(Line::styled(format!("  sha256 {}", e.sha256), t.muted));
        }
    }
    match &r.lease {
        LeaseView::None => {}
        LeaseView::Held(s) => out.push(Line::styled(format!("Lease held: {s}"), t.muted)),
        LeaseView::Other(s) => out.push(Line::styled(format!("cannot act: {s}"), t.error)),
        LeaseView::Expired(s) => out.push(Line::styled(format!("{s} — t: take it over"), t.warn)),
    }
    out
}

/// Lines about the journal's interrupted steps: shown first, where no long detail can push them
/// out of the panel.
fn interrupted<'a>(t: &Theme, pb: &PlaybookUi) -> Vec<Line<'a>> {
    let mut out = vec![];
    let Some(r) = &pb.runner else { return out };
    for s in &r.interrupted {
        out.push(Line::styled(
            format!(
                "interrupted — state unknown, re-check: {} {} (a: acknowledge)",
                unstick_core::remedy::journal::step::step_label(&s.intent.step_id),
                s.intent.action.summary()
            ),
            t.error,
        ));
    }
    out
}

impl PlaybookUi {
    /// Draws the Playbook view over `area` from its own state and `cx`.
    pub fn draw(&self, f: &mut Frame, area: Rect, cx: &PlaybookDrawCtx) {
        let (t, pb) = (cx.theme, self);
        f.render_widget(Clear, area);
        let mode = match cx.mode {
            WriteMode::ReadOnly => " READ-ONLY",
            WriteMode::DryRun => " DRY-RUN",
            WriteMode::Live => "",
        };
        // the incident id (the journal's name, for `unstick journal`) keeps both ends and at
        // least 20 columns; the title, prose, gives way first (seen in tmux at 80 columns:
        // `playbook Release the device held in another mount namespace · …`)
        let room = (area.width as usize).saturating_sub(14);
        let inc = pb.runner.as_ref().map(|r| sanitize(&r.incident)).unwrap_or_default();
        let title_w = crate::ui::view::util::width(&pb.playbook.title) + " playbook  ·  ".chars().count();
        let inc_w = crate::ui::view::util::width(&inc).min(room.saturating_sub(title_w).max(20));
        let inc = if inc.is_empty() { inc } else { format!(" · {}", fit_middle(&inc, inc_w)) };
        let prose = room.saturating_sub(crate::ui::view::util::width(&inc) + " playbook  ".len());
        let title = format!(" playbook {}{inc} ", fit_ids(&pb.playbook.title, prose));
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border_focused)
            .title(Line::from(vec![plain(title, t.title), plain(mode, t.badge)]));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let n = pb.playbook.steps.len() as u16;
        // the last result gets the rows it wraps to (a journal error names a long path), up to a
        // third of the panel; the steps and the detail give way
        let cap = (inner.height / 3).max(2) as usize;
        let m = match (&pb.busy, &pb.message) {
            (Some(b), _) => vec![Line::styled(format!("… {b}"), t.accent)],
            (None, Some((ok, s))) => message_lines(s, if *ok { t.ok } else { t.error }, inner.width, cap),
            (None, None) => vec![Line::raw("")],
        };
        let m = Paragraph::new(m).wrap(Wrap { trim: false });
        let m_rows = (m.line_count(inner.width) as u16).clamp(2, cap as u16);
        let [steps, rest, msg, keys] = Layout::vertical([
            Constraint::Length(n.min(inner.height / 2)),
            Constraint::Min(1),
            Constraint::Length(m_rows),
            Constraint::Length(1),
        ])
        .areas(inner);
        let w = inner.width as usize;
        let cursor = pb.runner.as_ref().map(|r| r.cursor);
        let lines: Vec<Line> = pb
            .playbook
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let st = step_state(pb, i);
                let style = match st {
                    "done" => t.ok,
                    "failed" => t.error,
                    "running" | "undone" => t.accent,
                    "locked" | "skipped" => t.muted,
                    _ => t.text,
                };
                let mark = if cursor == Some(i) { "▶" } else { " " };
                let text = fit_ids(&format!("{mark}{st:<8}{:>2} {:<7}{}", i + 1, s.kind.name(), sanitize(&s.title)), w);
                Line::styled(text, if i == pb.selected { t.selected } else { style })
            })
            .collect();
        let first = (pb.selected + 1).saturating_sub(steps.height as usize);
        f.render_widget(Paragraph::new(lines).scroll((first as u16, 0)), steps);
        let mut body = interrupted(t, pb);
        body.extend(detail(cx, pb, w));
        body.extend(incident(t, pb));
        f.render_widget(Paragraph::new(body).wrap(Wrap { trim: false }), rest);
        f.render_widget(m, msg);
        let finished = cursor.is_some_and(|c| c >= pb.playbook.steps.len());
        let (hint, style) = if finished {
            ("✓ every step is done: Esc closes the playbook (u undoes the newest step)", t.ok)
        } else if cx.training {
            ("Enter run  j/k step  s skip  u undo  a ack  o override  h hints  Esc close", t.muted)
        } else {
            ("Enter run  j/k step  e full copy  s skip  u undo  a ack  o override  Esc close", t.muted)
        };
        f.render_widget(Paragraph::new(Line::styled(fit(hint, w), style)), keys);
    }
}

/// The lines of a result `s` (one per line of it) in at most `rows` rows `width` wide: when it
/// is longer, its middle lines give way to a `…` line, so its first line (what happened) and its
/// last (how to go on) stay on screen (seen in tmux on unmap-busy: a state-changed refusal's
/// list of changes hid its "Esc closes this playbook …").
fn message_lines<'a>(s: &str, style: ratatui::style::Style, width: u16, rows: usize) -> Vec<Line<'a>> {
    let to_lines = |v: &[String]| v.iter().map(|l| Line::styled(l.clone(), style)).collect::<Vec<Line>>();
    let count = |v: &[String]| Paragraph::new(to_lines(v)).wrap(Wrap { trim: false }).line_count(width);
    let mut keep: Vec<String> = s.lines().map(sanitize).collect();
    let mut dropped = false;
    while keep.len() > 2 + usize::from(dropped) && count(&keep) > rows {
        keep.remove(if dropped { 2 } else { 1 });
        if !dropped {
            keep.insert(1, "  …".into());
            dropped = true;
        }
    }
    to_lines(&keep)
}
