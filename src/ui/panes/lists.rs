//! The three list panes: Nodes, Pods, Volumes. Only the rows that fit are formatted.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};

use super::columns::{self, Shown};
use super::ctx::{ViewCtx, block};
use super::state::PaneView;
use crate::theme::Theme;
use crate::ui::panes::Pane;
use crate::ui::view::util::{fit, fit_middle};
use unstick_core::model::kube::{
    OUT_OF_SERVICE_TAINT, PodState, internal_ips, node_ready, pod_claims, pod_node, pod_state, taints,
    volumes_attached, volumes_in_use,
};
use unstick_core::text::sanitize;

/// One generic list renderer for the three list panes: `make(row, shown)` gives every column's
/// cell of a row; the columns scrolled away or beyond the width are left out (and marked).
fn table<'a>(
    f: &mut Frame,
    v: &PaneView,
    cx: &ViewCtx,
    area: Rect,
    total: usize,
    make: impl Fn(usize, &Shown) -> Vec<Cell<'a>>,
) {
    let pane = v.pane();
    let cols = columns::of(pane);
    let shown = columns::layout(cols, area.width.saturating_sub(2), v.hscroll());
    let filter = v.filter();
    let mut extra = format!("[{total}]");
    if let Some(ns) = cx.namespace.filter(|_| pane != Pane::Nodes) {
        extra.push_str(&format!(" ns:{}", sanitize(ns)));
    }
    if !filter.is_empty() {
        extra.push_str(&format!(" /{}", filter.text()));
    }
    extra.push_str(shown.mark());
    let block = block(cx, pane, extra);
    if total == 0 {
        let msg = match cx.pane_state(pane) {
            Some((_, unstick_core::sources::kube::SourceState::Connecting)) => "listing…",
            _ if !filter.is_empty() => "nothing matches the filter (Esc clears it)",
            _ if cx.namespace.is_some() && pane != Pane::Nodes => "none in this namespace (:ns shows all)",
            _ if pane == Pane::Pods && !cx.all_pods => "no troubled pods (a: show all)",
            _ => "none",
        };
        f.render_widget(Paragraph::new(Line::styled(msg, cx.theme.muted)).block(block), area);
        return;
    }
    let h = area.height.saturating_sub(3) as usize; // borders + header
    let sel = v.selected().min(total - 1);
    let first = v.first_visible(total, h);
    let pick = |mut cells: Vec<Cell<'a>>| -> Row<'a> {
        let mut out = Vec::with_capacity(shown.idx.len());
        for &i in shown.idx.iter().rev() {
            if i < cells.len() {
                out.push(cells.swap_remove(i));
            }
        }
        out.reverse();
        Row::new(out)
    };
    let rows: Vec<Row> = (first..(first + h).min(total)).map(|i| pick(make(i, &shown))).collect();
    let header = Row::new(shown.idx.iter().map(|&i| Cell::from(cols[i].header).style(cx.theme.accent)));
    let widths: Vec<Constraint> = shown.widths.iter().map(|w| Constraint::Length(*w)).collect();
    let focused = cx.focus == pane;
    let t = Table::new(rows, widths).header(header).block(block).column_spacing(1).row_highlight_style(if focused {
        cx.theme.selected
    } else {
        cx.theme.text.add_modifier(ratatui::style::Modifier::BOLD)
    });
    let mut state = TableState::default().with_selected(Some(sel - first));
    f.render_stateful_widget(t, area, &mut state);
}

/// Nodes: NAME, READY (status and time since its last transition), INTERNAL-IP, ATT/USE, TAINTS
/// (then the Medik8s remediation objects that name the node, `SelfNodeRemediation <ns>/<name>`:
/// a remediator acts there).
pub fn nodes(f: &mut Frame, v: &PaneView, cx: &ViewCtx, area: Rect) {
    let th = cx.theme;
    let rows = &cx.rows.nodes;
    table(f, v, cx, area, rows.len(), |i, shown| {
        let n = &cx.snap.nodes[rows[i]];
        let r = node_ready(n);
        let age = r.since.map(|s| cx.age(s)).unwrap_or_default();
        let ready_style = if r.is_ready() { th.ok } else { th.error };
        let ips: Vec<String> = internal_ips(n).iter().map(|i| i.to_string()).collect();
        let ts = taints(n);
        let name = n.metadata.name.as_deref().unwrap_or("");
        let remediations = cx.snap.remediators.as_ref().map(|r| r.objects.as_slice()).unwrap_or_default();
        let by: Vec<String> = remediations.iter().filter(|r| r.node == name).map(|r| sanitize(&r.by)).collect();
        let taint_text = ts
            .iter()
            .map(|t| if t.starts_with(OUT_OF_SERVICE_TAINT) { "out-of-service".to_string() } else { short_taint(t) })
            .chain(by.iter().cloned())
            .collect::<Vec<_>>()
            .join(",");
        let oos = !by.is_empty() || ts.iter().any(|t| t.starts_with(OUT_OF_SERVICE_TAINT));
        vec![
            flag(th, cx.flagged.nodes.contains(name)),
            id_cell(name, shown, 1),
            Cell::from(format!("{} {age}", r.status)).style(ready_style),
            Cell::from(ips.join(",")),
            Cell::from(format!("{}/{}", volumes_attached(n).len(), volumes_in_use(n).len())),
            Cell::from(taint_text).style(if oos { th.warn } else { th.muted }),
        ]
    });
}

/// A cell of identifiers (names, namespaces, nodes) in column `i`: cut in its middle to the
/// column's width, so two names that share a prefix (`incident-mass-unmap-busy`,
/// `incident-mass-unmap-idle`) never read the same (the table would cut their ends).
fn id_cell<'a>(s: &str, shown: &Shown, i: usize) -> Cell<'a> {
    Cell::from(fit_middle(&sanitize(s), shown.width_of(i) as usize))
}

/// The mark of a row whose object appears in a finding.
fn flag<'a>(th: &Theme, on: bool) -> Cell<'a> {
    if on { Cell::from("!").style(th.error) } else { Cell::from(" ") }
}

/// `node.kubernetes.io/unreachable:NoExecute` → `unreachable:NoExecute`.
fn short_taint(t: &str) -> String {
    t.strip_prefix("node.kubernetes.io/").unwrap_or(t).to_string()
}

/// Pods: NAMESPACE, NAME, STATUS, AGE (since deletion for Terminating), NODE, PVC.
pub fn pods(f: &mut Frame, v: &PaneView, cx: &ViewCtx, area: Rect) {
    let th = cx.theme;
    let rows = &cx.rows.pods;
    table(f, v, cx, area, rows.len(), |i, shown| {
        let p = &cx.snap.pods[rows[i]];
        let state = pod_state(p);
        let (age_from, style): (Option<jiff::Timestamp>, Style) = match &state {
            PodState::Terminating { since } => (Some(*since), th.warn),
            PodState::Waiting { .. } | PodState::Pending => {
                (p.metadata.creation_timestamp.as_ref().map(|t| t.0), th.error)
            }
            _ => (p.metadata.creation_timestamp.as_ref().map(|t| t.0), th.text),
        };
        let age = age_from.map(|t| cx.age(t)).unwrap_or_default();
        vec![
            flag(th, cx.flagged.pods.contains(&unstick_core::model::key_of(&p.metadata))),
            id_cell(p.metadata.namespace.as_deref().unwrap_or(""), shown, 1),
            id_cell(p.metadata.name.as_deref().unwrap_or(""), shown, 2),
            Cell::from(fit(&sanitize(&state.label()), 17)).style(style),
            Cell::from(age),
            id_cell(pod_node(p).unwrap_or("<none>"), shown, 5),
            id_cell(&pod_claims(p).join(","), shown, 6),
        ]
    });
}

/// Volumes: PVC, POOL/IMAGE, ATTACHED (VolumeAttachments), MODES, IN-USE ON, PV, DRIVER; what
/// does not fit scrolls in sideways (← →).
pub fn volumes(f: &mut Frame, v: &PaneView, cx: &ViewCtx, area: Rect) {
    let th = cx.theme;
    let rows = &cx.rows.volumes;
    table(f, v, cx, area, rows.len(), |i, shown| {
        let image_w = shown.width_of(2) as usize;
        let v = &cx.lineage.volumes[rows[i]];
        let modes: Vec<&str> = v
            .access_modes
            .iter()
            .map(|m| match m.as_str() {
                "ReadWriteOnce" => "RWO",
                "ReadOnlyMany" => "ROX",
                "ReadWriteMany" => "RWX",
                "ReadWriteOncePod" => "RWOP",
                _ => "?",
            })
            .collect();
        let vas: Vec<String> = v
            .attachments
            .iter()
            .map(|a| {
                let mut s = a.node.clone();
                if a.attached {
                    s.push_str(" ✓");
                }
                if a.deleting {
                    s.push_str(" deleting");
                }
                s
            })
            .collect();
        let deleting = v.attachments.iter().any(|a| a.deleting);
        let image = v.image.as_ref().map(|i| fit_middle(&sanitize(&i.spec()), image_w)).unwrap_or_else(|| "-".into());
        let pvc = Cell::from(fit_middle(&sanitize(v.pvc.as_deref().unwrap_or("-")), shown.width_of(1) as usize));
        let va = id_cell(&vas.join(", "), shown, 3).style(if deleting { th.warn } else { th.text });
        let mark = flag(th, cx.flagged.pvs.contains(&v.pv));
        let in_use = id_cell(&v.in_use_on.join(","), shown, 5);
        vec![
            mark,
            pvc,
            Cell::from(image),
            va,
            Cell::from(modes.join(",")),
            in_use,
            Cell::from(fit_middle(&sanitize(&v.pv), shown.width_of(6) as usize)),
            Cell::from(fit(&v.driver, shown.width_of(7) as usize)),
        ]
    });
}
