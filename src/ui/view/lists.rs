//! The three list panes: Nodes, Pods, Volumes. Only the rows that fit are formatted.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};

use super::{fit, pane_block, window};
use crate::model::kube::{
    OUT_OF_SERVICE_TAINT, PodState, internal_ips, node_ready, pod_claims, pod_node, pod_state, taints,
    volumes_attached, volumes_in_use,
};
use crate::text::{human_age, sanitize};
use crate::ui::app::{App, Pane};

#[allow(clippy::too_many_arguments)] // one generic list renderer for the three list panes
fn table<'a>(
    f: &mut Frame,
    app: &App,
    pane: Pane,
    area: Rect,
    header: Vec<&'a str>,
    widths: Vec<Constraint>,
    total: usize,
    make: impl Fn(usize) -> Row<'a>,
) {
    let filter = match pane {
        Pane::Nodes => &app.filters.nodes,
        Pane::Pods => &app.filters.pods,
        _ => &app.filters.volumes,
    };
    let mut extra = format!("[{total}]");
    if !filter.is_empty() {
        extra.push_str(&format!(" /{}", filter.text()));
    }
    let block = pane_block(app, pane, extra);
    if total == 0 {
        let msg = match app.pane_state(pane) {
            Some((_, crate::sources::kube::SourceState::Connecting)) => "listing…",
            _ if !filter.is_empty() => "nothing matches the filter (Esc clears it)",
            _ if pane == Pane::Pods && !app.all_pods => "no troubled pods (a: show all)",
            _ => "none",
        };
        f.render_widget(Paragraph::new(Line::styled(msg, app.theme.muted)).block(block), area);
        return;
    }
    let h = area.height.saturating_sub(3) as usize; // borders + header
    let sel = app.selected_row(pane).min(total - 1);
    let first = window(sel, h);
    let rows: Vec<Row> = (first..(first + h).min(total)).map(make).collect();
    let header = Row::new(header.into_iter().map(|h| Cell::from(h).style(app.theme.accent)));
    let focused = app.focus == pane;
    let t = Table::new(rows, widths).header(header).block(block).column_spacing(1).row_highlight_style(if focused {
        app.theme.selected
    } else {
        app.theme.text.add_modifier(ratatui::style::Modifier::BOLD)
    });
    let mut state = TableState::default().with_selected(Some(sel - first));
    f.render_stateful_widget(t, area, &mut state);
}

/// Nodes: NAME, READY (status and time since its last transition), INTERNAL-IP, TAINTS, ATT/USE.
pub fn nodes(f: &mut Frame, app: &App, area: Rect) {
    let th = &app.theme;
    let rows = &app.rows.nodes;
    table(
        f,
        app,
        Pane::Nodes,
        area,
        vec!["!", "NAME", "READY", "INTERNAL-IP", "ATT/USE", "TAINTS"],
        vec![
            Constraint::Length(1),
            Constraint::Min(12),
            Constraint::Length(12),
            Constraint::Length(15),
            Constraint::Length(7),
            Constraint::Min(8),
        ],
        rows.len(),
        |i| {
            let n = &app.snap.nodes[rows[i]];
            let r = node_ready(n);
            let age = r.since.map(|s| human_age((app.now - s).get_seconds())).unwrap_or_default();
            let ready_style = if r.is_ready() { th.ok } else { th.error };
            let ips: Vec<String> = internal_ips(n).iter().map(|i| i.to_string()).collect();
            let ts = taints(n);
            let taint_text = ts
                .iter()
                .map(
                    |t| if t.starts_with(OUT_OF_SERVICE_TAINT) { "out-of-service".to_string() } else { short_taint(t) },
                )
                .collect::<Vec<_>>()
                .join(",");
            let oos = ts.iter().any(|t| t.starts_with(OUT_OF_SERVICE_TAINT));
            let name = n.metadata.name.as_deref().unwrap_or("");
            Row::new(vec![
                flag(app, app.flagged.nodes.contains(name)),
                Cell::from(sanitize(name)),
                Cell::from(format!("{} {age}", r.status)).style(ready_style),
                Cell::from(ips.join(",")),
                Cell::from(format!("{}/{}", volumes_attached(n).len(), volumes_in_use(n).len())),
                Cell::from(taint_text).style(if oos { th.warn } else { th.muted }),
            ])
        },
    );
}

/// The mark of a row whose object appears in a finding.
fn flag<'a>(app: &App, on: bool) -> Cell<'a> {
    if on { Cell::from("!").style(app.theme.error) } else { Cell::from(" ") }
}

/// `node.kubernetes.io/unreachable:NoExecute` → `unreachable:NoExecute`.
fn short_taint(t: &str) -> String {
    t.strip_prefix("node.kubernetes.io/").unwrap_or(t).to_string()
}

/// Pods: NAMESPACE, NAME, STATUS, AGE (since deletion for Terminating), NODE, PVC.
pub fn pods(f: &mut Frame, app: &App, area: Rect) {
    let th = &app.theme;
    let rows = &app.rows.pods;
    let wide = area.width >= 100;
    let mut header = vec!["!", "NAMESPACE", "NAME", "STATUS", "AGE", "NODE"];
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(12),
        Constraint::Min(20),
        Constraint::Length(17),
        Constraint::Length(5),
        Constraint::Length(14),
    ];
    if wide {
        header.push("PVC");
        widths.push(Constraint::Min(10));
    }
    table(f, app, Pane::Pods, area, header, widths, rows.len(), |i| {
        let p = &app.snap.pods[rows[i]];
        let state = pod_state(p);
        let (age_from, style): (Option<jiff::Timestamp>, Style) = match &state {
            PodState::Terminating { since } => (Some(*since), th.warn),
            PodState::Waiting { .. } | PodState::Pending => {
                (p.metadata.creation_timestamp.as_ref().map(|t| t.0), th.error)
            }
            _ => (p.metadata.creation_timestamp.as_ref().map(|t| t.0), th.text),
        };
        let age = age_from.map(|t| human_age((app.now - t).get_seconds())).unwrap_or_default();
        let mut cells = vec![
            flag(app, app.flagged.pods.contains(&crate::model::key_of(&p.metadata))),
            Cell::from(sanitize(p.metadata.namespace.as_deref().unwrap_or(""))),
            Cell::from(sanitize(p.metadata.name.as_deref().unwrap_or(""))),
            Cell::from(fit(&sanitize(&state.label()), 17)).style(style),
            Cell::from(age),
            Cell::from(sanitize(pod_node(p).unwrap_or("<none>"))),
        ];
        if wide {
            cells.push(Cell::from(sanitize(&pod_claims(p).join(","))));
        }
        Row::new(cells)
    });
}

/// Volumes: PVC, PV, DRIVER, POOL/IMAGE, MODES, ATTACHED (VolumeAttachments), IN-USE ON. Below 120
/// columns only PVC, POOL/IMAGE and ATTACHED (the Ceph pane shows the rest for the selection).
pub fn volumes(f: &mut Frame, app: &App, area: Rect) {
    let th = &app.theme;
    let rows = &app.rows.volumes;
    let wide = area.width >= 170;
    let medium = !wide && area.width >= 100;
    let (header, widths, image_w) = if wide {
        (
            vec!["!", "PVC", "PV", "DRIVER", "POOL/IMAGE", "MODES", "ATTACHED (VA)", "IN-USE ON"],
            vec![
                Constraint::Length(1),
                Constraint::Fill(2),
                Constraint::Fill(2),
                Constraint::Length(16),
                Constraint::Length(56),
                Constraint::Length(5),
                Constraint::Fill(2),
                Constraint::Fill(1),
            ],
            56,
        )
    } else if medium {
        let image_w = 40;
        (
            vec!["!", "PVC", "POOL/IMAGE", "MODES", "ATTACHED (VA)", "IN-USE ON"],
            vec![
                Constraint::Length(1),
                Constraint::Fill(2),
                Constraint::Length(image_w as u16),
                Constraint::Length(5),
                Constraint::Fill(2),
                Constraint::Fill(1),
            ],
            image_w,
        )
    } else {
        let image_w = (area.width as usize).saturating_sub(2 + 2 + 24 + 16 + 3).max(10);
        (
            vec!["!", "PVC", "POOL/IMAGE", "ATTACHED (VA)"],
            vec![
                Constraint::Length(1),
                Constraint::Length(24),
                Constraint::Length(image_w as u16),
                Constraint::Fill(1),
            ],
            image_w,
        )
    };
    table(f, app, Pane::Volumes, area, header, widths, rows.len(), |i| {
        let v = &app.lineage.volumes[rows[i]];
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
        let pvc = Cell::from(sanitize(v.pvc.as_deref().unwrap_or("-")));
        let va = Cell::from(sanitize(&vas.join(", "))).style(if deleting { th.warn } else { th.text });
        let mark = flag(app, app.flagged.pvs.contains(&v.pv));
        let in_use = Cell::from(sanitize(&v.in_use_on.join(",")));
        let cells = if wide {
            vec![
                mark,
                pvc,
                Cell::from(sanitize(&v.pv)),
                Cell::from(fit(&v.driver, 16)),
                Cell::from(image),
                Cell::from(modes.join(",")),
                va,
                in_use,
            ]
        } else if medium {
            vec![mark, pvc, Cell::from(image), Cell::from(modes.join(",")), va, in_use]
        } else {
            vec![mark, pvc, Cell::from(image), va]
        };
        Row::new(cells)
    });
}

/// Shortens `s` to `w` columns by cutting the middle (`replicapool/csi-vol-5b…c3d4e02`): both
/// the pool and the end of a UUID stay readable.
fn fit_middle(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n <= w || w < 5 {
        return s.to_string();
    }
    let tail = (w - 1) / 2;
    let head = w - 1 - tail;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}
