//! Small drawing helpers shared by the views and by the components that draw themselves
//! (`popups/note.rs`, `popups/describe.rs`, ...): centring a popup, fitting text, the scroll marks.
//! Imports nothing of the app, so any component may use it without an import cycle.

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The mark on a scrolled box's bottom border: what is above and below the visible rows.
pub fn more_marks(offset: u16, total: u16, height: u16) -> String {
    let below = total.saturating_sub(offset.saturating_add(height));
    match (offset > 0, below > 0) {
        (false, false) => String::new(),
        (true, false) => format!(" ↑ {offset} above "),
        (false, true) => format!(" ↓ {below} more below (j/↓ PgDn) "),
        (true, true) => format!(" ↑ {offset} above · ↓ {below} more below "),
    }
}

/// A `w`×`h` rectangle centred in `area` (clamped to it), for popups and overlays.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(h.min(area.height))]).flex(Flex::Center).areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(w.min(area.width))]).flex(Flex::Center).areas(row);
    rect
}

/// Display columns of `s` (unicode-width: a wide CJK character takes 2, a combining mark 0).
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// The longest prefix of `s` that takes at most `w` columns.
fn head(s: &str, w: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += c.width().unwrap_or(0);
        if used > w {
            return &s[..i];
        }
    }
    s
}

/// The longest suffix of `s` that takes at most `w` columns.
fn tail(s: &str, w: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices().rev() {
        used += c.width().unwrap_or(0);
        if used > w {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

/// Truncates `s` to `w` display columns, marking the cut with `…`: for prose and labels. Text
/// that holds identifiers goes through [`fit_ids`], which never cuts one to a shared prefix.
pub fn fit(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    format!("{}…", head(s, w.saturating_sub(1)))
}

/// Shortens `s` to `w` columns by cutting the middle (`replicapool/csi-vol-5b…c3d4e02`): both
/// ends of an identifier stay readable (the pool and the end of a UUID, a pod's generated
/// suffix), so names that share a prefix are never cut to the same text. Below 5 columns `s` is
/// returned whole (the table clips it).
pub fn fit_middle(s: &str, w: usize) -> String {
    if width(s) <= w || w < 5 {
        return s.to_string();
    }
    let back = (w - 1) / 2;
    let front = w - 1 - back;
    format!("{}…{}", head(s, front), tail(s, back))
}

/// The narrowest an identifier inside a sentence is cut to by [`fit_ids`] (both ends kept).
const ID_MIN: usize = 11;

/// Fits a sentence that names identifiers (a finding's summary, a step's title, a banner) into
/// `w` columns without cutting any identifier to a prefix it shares with another: the sentence is
/// cut between words (` …` marks it); the word the cut would fall in, when it has room for at
/// least 11 columns, is kept cut in its middle (`(pvc-6a1e0c…00000201):`, both ends readable);
/// a first word wider than `w` is cut in the middle.
pub fn fit_ids(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    let mut out = String::new();
    let words: Vec<&str> = s.split(' ').collect();
    for (i, word) in words.iter().enumerate() {
        let start = if i == 0 { 0 } else { width(&out) + 1 };
        let sep = if i == 0 { "" } else { " " };
        // room for this word, keeping two columns for ` …`
        let room = w.saturating_sub(start + 2);
        if width(word) <= room {
            out = format!("{out}{sep}{word}");
            continue;
        }
        if room >= ID_MIN {
            // the last word, cut in its middle, needs no end mark: it gets the mark's room too
            let last = words[i + 1..].iter().all(|w| w.is_empty());
            if last {
                // trailing spaces (a title's padding) are kept
                let pad = " ".repeat(words.len() - i - 1);
                let cut = fit_middle(word, w.saturating_sub(start + pad.len()));
                return format!("{out}{sep}{cut}{pad}");
            }
            out = format!("{out}{sep}{}", fit_middle(word, room));
        }
        break;
    }
    if out.trim().is_empty() { fit_middle(s, w) } else { format!("{} …", out.trim_end()) }
}

/// `s` as a span in `style`.
pub fn plain<'a>(s: impl Into<String>, style: Style) -> Span<'a> {
    Span::styled(s.into(), style)
}

#[cfg(test)]
mod tests {
    use super::{fit, fit_ids, fit_middle, width};

    #[test]
    fn a_sentence_keeps_its_identifiers_distinct_at_every_width() {
        let summary = |n: u8| {
            format!(
                "node node20{n} cannot unmap /dev/rbd{n} (pvc-6a1e0c3d-55aa-4e7b-9c1d-0a000000020{n}): device busy (exit status 16), 30 failures"
            )
        };
        for w in [30, 40, 60, 80, 120] {
            let cut: Vec<String> = (1..=3).map(|n| fit_ids(&summary(n), w)).collect();
            assert!(cut.iter().all(|c| width(c) <= w), "{w}: {cut:?}");
            let pv: Vec<Option<&str>> = cut.iter().map(|c| c.split(' ').find(|x| x.starts_with("(pvc"))).collect();
            if pv.iter().all(Option::is_some) {
                assert!(pv[0] != pv[1] && pv[1] != pv[2], "the PVs read the same at {w}: {cut:?}");
                assert!(pv.iter().flatten().all(|p| p.ends_with("):")), "the end of the UUID is kept at {w}: {cut:?}");
            }
        }
        let step = fit_ids("Set mountPropagation on monitoring/node-exporter", 40);
        assert_eq!(step, "Set mountPropagation on monitori…xporter", "the DaemonSet's end stays; no end mark after it");
        let lock = fit_ids("Remove lock kubelet_lock_magic_k8s-node-lost held by client.24128", 40);
        assert!(lock.starts_with("Remove lock kubelet_") && lock.contains("…") && width(&lock) <= 40, "{lock}");
        assert!(lock.contains("node-lost"), "the lock id's distinguishing end is kept: {lock}");
        assert_eq!(fit_ids("short", 12), "short");
    }

    #[test]
    fn cuts_count_display_columns_not_chars() {
        // a wide character takes two columns: the cut must not overflow
        assert_eq!(width(&fit("日本語のテキスト", 7)), 7);
        assert_eq!(fit("日本語のテキスト", 7), "日本語…");
        assert!(width(&fit_middle("日本語のテキストです", 9)) <= 9);
    }

    #[test]
    fn identifiers_that_share_a_prefix_stay_distinct_when_cut() {
        let pvs = [
            "pvc-6a1e0c3d-5b2f-4c11-9e8f-0a1b2c3d4e01",
            "pvc-6a1e0c3d-5b2f-4c11-9e8f-0a1b2c3d4e02",
            "pvc-6a1e0c3d-5b2f-4c11-9e8f-0a1b2c3d4e03",
        ];
        for w in [8, 12, 20] {
            let cut: Vec<String> = pvs.iter().map(|p| fit_middle(p, w)).collect();
            assert!(cut.iter().all(|c| c.chars().count() == w), "{cut:?}");
            assert!(cut[0] != cut[1] && cut[1] != cut[2], "cut to the same text at {w}: {cut:?}");
        }
        assert_eq!(fit_middle("short", 12), "short");
    }
}
