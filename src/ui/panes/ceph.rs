//! The Ceph pane: watchers, locks and covering blocklist entries of the selected image, each
//! address matched to the node whose InternalIP owns it. Errors show the command and message.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

use super::ctx::{ViewCtx, block, muted};
use super::state::PaneView;
use crate::ui::panes::{Pane, Subject};
use crate::ui::view::util::plain;
use unstick_core::attribution::{Attribution, volume_nodes};
use unstick_core::model::ceph::EntityAddr;
use unstick_core::model::kube::node_ready;
use unstick_core::model::{CephRead, CephReadError, ImageRef, Observed, Unverified};
use unstick_core::text::sanitize;

/// Draws the pane for the subject, scrolled to `v`'s offset.
pub fn draw(f: &mut Frame, v: &PaneView, cx: &ViewCtx, area: Rect) {
    let lines = match (cx.subject, cx.subject_image()) {
        (_, Some(image)) => image_lines(cx, &image),
        (Subject::Node(name), None) => node_lines(cx, name),
        (Subject::None, None) => vec![muted(cx.theme, "Select a pod or volume (Enter on a pod drills to its volume).")],
        (_, None) => vec![muted(cx.theme, "The selected object has no RBD-backed volume.")],
    };
    let lines = super::ctx::filtered(lines, v.filter());
    let extra = cx.subject_image().map(|i| i.spec()).unwrap_or_default();
    // the image names the pane: cut in its middle, never to a prefix another image shares
    // (` Ceph ` and the corners take 8 columns)
    let extra = crate::ui::view::util::fit_middle(&sanitize(&extra), (area.width as usize).saturating_sub(9));
    let block = block(cx, Pane::Ceph, extra);
    let p = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((v.selected().min(u16::MAX as usize) as u16, 0))
        .block(block);
    f.render_widget(p, area);
}

/// Who a client address belongs to, as `node (Ready=…) by <proof>` or `unattributed
/// (candidates: …)`, and whether that node is Ready.
fn owner(cx: &ViewCtx, address: &str, image: &ImageRef) -> (String, bool) {
    let attached = cx.lineage.by_image(image).map(volume_nodes).unwrap_or_default();
    match cx.attr.attribute(address, &attached) {
        Some(Attribution::Tied(t)) => {
            let ready = cx
                .snap
                .nodes
                .iter()
                .find(|n| n.metadata.name.as_deref() == Some(t.node.as_str()))
                .map(|n| node_ready(n))
                .map(|r| (r.status.to_string(), r.is_ready()))
                .unwrap_or(("?".into(), false));
            (format!("{} (Ready={}) by {}", t.node, ready.0, t.proof), ready.1)
        }
        Some(other) => (other.text(), false),
        None => ("not an address".into(), false),
    }
}

fn blocklisted(cx: &ViewCtx, address: &str) -> Option<String> {
    let addr = EntityAddr::parse(address)?;
    let list = cx.snap.ceph.blocklist.as_ref()?.value.as_ref().ok()?;
    // An entry that has expired fences nothing (Ceph drops it on its next tick).
    list.iter().find(|e| !e.is_expired_at(cx.now) && e.covers(&addr)).map(|e| e.text().to_string())
}

fn image_lines<'a>(cx: &ViewCtx, image: &ImageRef) -> Vec<Line<'a>> {
    let t = cx.theme;
    let mut out = vec![];
    if let Some(v) = cx.lineage.by_image(image) {
        out.push(Line::from(vec![
            plain("PV ", t.muted),
            plain(sanitize(&v.pv), t.text),
            plain("  PVC ", t.muted),
            plain(sanitize(v.pvc.as_deref().unwrap_or("-")), t.text),
            plain("  driver ", t.muted),
            plain(sanitize(&v.driver), t.text),
        ]));
    }
    let Some(facts) = cx.snap.ceph.images.get(image) else {
        let msg = if !cx.ceph.enabled {
            "Ceph access is off (give --ceph-conf, or set [ceph] in the config)."
        } else if cx.ceph.pending.contains(image) {
            "reading rbd status / rbd lock ls …"
        } else {
            "not read yet (r reads it now)"
        };
        out.push(muted(cx.theme, msg));
        return out;
    };
    let pending = if cx.ceph.pending.contains(image) { " (refreshing…)" } else { "" };
    out.push(muted(cx.theme, format!("read {} ago{pending}", cx.age(facts.watchers.at))));

    let unverified = |read: CephRead| cx.snap.ceph.unverified.get(&read);
    section(cx, &mut out, "Watchers", &facts.watchers, unverified(CephRead::Watchers(image.clone())), |w| {
        let (node, ready) = owner(cx, &w.address, image);
        let bl = blocklisted(cx, &w.address).map(|e| format!("  BLOCKLISTED by {e}")).unwrap_or_default();
        vec![
            Line::from(vec![
                plain(format!("  {} ", sanitize(&w.address)), t.text),
                plain(format!("client.{} cookie {}", w.client, w.cookie), t.muted),
            ]),
            Line::from(vec![
                plain("    from ", t.muted),
                plain(sanitize(&node), if ready { t.ok } else { t.error }),
                plain(bl, t.warn),
            ]),
        ]
    });
    section(cx, &mut out, "Locks", &facts.locks, unverified(CephRead::Locks(image.clone())), |l| {
        let (node, ready) = owner(cx, &l.address, image);
        vec![
            Line::from(vec![
                plain(format!("  {} ", sanitize(&l.id)), t.text),
                plain(format!("{} ", sanitize(&l.locker)), t.muted),
                plain(sanitize(&l.address), t.text),
            ]),
            Line::from(vec![plain("    from ", t.muted), plain(sanitize(&node), if ready { t.ok } else { t.error })]),
        ]
    });

    // Blocklist entries that cover any of this image's client addresses.
    out.push(Line::styled("Blocklist", t.accent));
    match &cx.snap.ceph.blocklist {
        None => out.push(muted(cx.theme, "  not read yet")),
        Some(Observed { value: Err(e), .. }) => {
            out.push(Line::styled(format!("  {}", sanitize(&e.to_string())), t.error))
        }
        Some(Observed { value: Ok(list), at }) => {
            if let Some(u) = unverified(CephRead::Blocklist) {
                out.push(unverified_line(cx, u));
            }
            let mut addrs: Vec<EntityAddr> = vec![];
            if let Ok(ws) = &facts.watchers.value {
                addrs.extend(ws.iter().filter_map(|w| EntityAddr::parse(&w.address)));
            }
            if let Ok(ls) = &facts.locks.value {
                addrs.extend(ls.iter().filter_map(|l| EntityAddr::parse(&l.address)));
            }
            let covering: Vec<_> =
                list.iter().filter(|e| !e.is_expired_at(cx.now) && addrs.iter().any(|a| e.covers(a))).collect();
            out.push(muted(
                cx.theme,
                format!(
                    "  {} of {} entries cover these addresses (read {} ago)",
                    covering.len(),
                    list.len(),
                    cx.age(*at)
                ),
            ));
            // an entry a Fenced csi-addons NetworkFence owns is csi-addons'; one covering a node's
            // CSIAddonsNode fence client is named by it (still a leftover when no fence owns it)
            let fences = cx.snap.network_fences.as_deref().unwrap_or_default();
            let cnodes = cx.snap.csiaddons_nodes.as_deref().unwrap_or_default();
            for e in covering {
                let mut spans = vec![
                    plain(format!("  {} ", sanitize(e.text())), t.warn),
                    plain(format!("until {}", sanitize(e.until.as_deref().unwrap_or("?"))), t.muted),
                ];
                if let Some(f) = unstick_core::model::fence::owner_of(fences, e) {
                    let result = if f.result.is_empty() { "not acted on yet" } else { f.result.as_str() };
                    spans.push(plain(format!("  NetworkFence {} ({result})", sanitize(&f.name)), t.text));
                } else if let Some(n) = unstick_core::model::csiaddons_node::covering(cnodes, e) {
                    let who = format!("  csi-addons: node {}'s fence client", sanitize(&n.node_id));
                    spans.push(plain(who, t.text));
                }
                out.push(Line::from(spans));
            }
        }
    }
    out
}

fn section<'a, T>(
    cx: &ViewCtx,
    out: &mut Vec<Line<'a>>,
    title: &str,
    obs: &Observed<Result<Vec<T>, CephReadError>>,
    unverified: Option<&Unverified>,
    lines: impl Fn(&T) -> Vec<Line<'a>>,
) {
    let t = cx.theme;
    match &obs.value {
        Ok(items) => {
            out.push(Line::styled(format!("{title} ({})", items.len()), t.accent));
            if let Some(u) = unverified {
                out.push(unverified_line(cx, u));
            }
            if items.is_empty() {
                out.push(muted(cx.theme, "  none"));
            }
            out.extend(items.iter().flat_map(lines));
        }
        Err(e) => {
            out.push(Line::styled(title.to_string(), t.accent));
            out.push(Line::styled(format!("  {}", sanitize(&e.to_string())), t.error));
        }
    }
}

/// `  unverified since HH:MM:SSZ (error)`: a kept value whose re-reads fail.
fn unverified_line<'a>(cx: &ViewCtx, u: &Unverified) -> Line<'a> {
    let text = format!("  unverified since {} ({})", u.since.strftime("%H:%M:%SZ"), sanitize(&u.error.to_string()));
    Line::styled(text, cx.theme.warn)
}

/// For a node: every known image with a watcher or lock tied to the node (any proof).
fn node_lines<'a>(cx: &ViewCtx, node: &str) -> Vec<Line<'a>> {
    let t = cx.theme;
    let mut out = vec![muted(cx.theme, format!("Images with a watcher or lock from {}:", sanitize(node)))];
    let mut any = false;
    for (image, facts) in &cx.snap.ceph.images {
        let from_node = |a: &str| cx.attr.tie(a).is_some_and(|t| t.node == node);
        let w = facts.watchers.value.as_ref().map(|w| w.iter().filter(|w| from_node(&w.address)).count()).unwrap_or(0);
        let l = facts.locks.value.as_ref().map(|l| l.iter().filter(|l| from_node(&l.address)).count()).unwrap_or(0);
        if w + l > 0 {
            any = true;
            out.push(Line::from(vec![
                plain(format!("  {} ", sanitize(&image.spec())), t.text),
                plain(format!("{w} watcher(s), {l} lock(s)"), t.warn),
            ]));
        }
    }
    if !any {
        out.push(muted(cx.theme, "  none among the images read so far (s scans all)"));
    }
    out
}
