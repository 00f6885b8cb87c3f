//! Column layout of the wide tables: which columns fit the pane's width after scrolling sideways
//! (← →), and how wide each one is. Pinned columns (the mark, the name) always stay; the others
//! scroll. Nothing is dropped for good: a hidden column is marked `←` / `→` in the title.

use crate::ui::panes::Pane;

/// The columns of a list pane (none for the other panes), for drawing and sideways scrolling
/// ([`max_offset`]).
pub fn of(pane: Pane) -> &'static [Col] {
    match pane {
        Pane::Nodes => &NODE_COLS,
        Pane::Pods => &POD_COLS,
        Pane::Volumes => &VOLUME_COLS,
        _ => &[],
    }
}

const NODE_COLS: [Col; 6] = [
    Col::fixed("!", 1).pinned(),
    Col::flex("NAME", 13, 24, 1).pinned(),
    Col::fixed("READY", 12),
    Col::fixed("INTERNAL-IP", 15),
    Col::fixed("ATT/USE", 7),
    Col::flex("TAINTS", 8, 0, 2),
];

const POD_COLS: [Col; 7] = [
    Col::fixed("!", 1).pinned(),
    Col::flex("NAMESPACE", 12, 24, 1),
    Col::flex("NAME", 25, 32, 3).pinned(),
    Col::fixed("STATUS", 17),
    Col::fixed("AGE", 4),
    Col::flex("NODE", 13, 20, 1),
    Col::flex("PVC", 12, 0, 2),
];

const VOLUME_COLS: [Col; 8] = [
    Col::fixed("!", 1).pinned(),
    Col::flex("PVC", 26, 40, 2).pinned(),
    Col::flex("POOL/IMAGE", 28, 56, 6),
    Col::flex("ATTACHED (VA)", 16, 0, 2),
    Col::fixed("MODES", 5),
    Col::flex("IN-USE ON", 10, 0, 1),
    Col::flex("PV", 12, 0, 2),
    Col::flex("DRIVER", 12, 16, 1),
];

/// One column of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Col {
    /// Header text.
    pub header: &'static str,
    /// Narrowest useful width.
    pub min: u16,
    /// Widest useful width (0: no limit).
    pub max: u16,
    /// Share of the spare width it takes.
    pub grow: u16,
    /// Never scrolled away.
    pub pinned: bool,
}

impl Col {
    /// A fixed-width column.
    pub const fn fixed(header: &'static str, w: u16) -> Col {
        Col { header, min: w, max: w, grow: 0, pinned: false }
    }

    /// A column from `min` up to `max` (0: unlimited) taking `grow` shares of spare width.
    pub const fn flex(header: &'static str, min: u16, max: u16, grow: u16) -> Col {
        Col { header, min, max, grow, pinned: false }
    }

    /// The same column, pinned.
    pub const fn pinned(self) -> Col {
        Col { pinned: true, ..self }
    }
}

/// The columns shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// Indices into the column list, in order.
    pub idx: Vec<usize>,
    /// Width of each shown column (same order as `idx`).
    pub widths: Vec<u16>,
    /// Columns hidden on the left (scrolled away).
    pub left: bool,
    /// Columns hidden on the right.
    pub right: bool,
}

impl Shown {
    /// The width of column `i`, 0 when it is hidden.
    pub fn width_of(&self, i: usize) -> u16 {
        self.idx.iter().position(|&x| x == i).map(|p| self.widths[p]).unwrap_or(0)
    }

    /// ` ←`, ` →`, ` ←→` or nothing: the title mark of hidden columns.
    pub fn mark(&self) -> &'static str {
        match (self.left, self.right) {
            (true, true) => " ←→",
            (true, false) => " ←",
            (false, true) => " →",
            (false, false) => "",
        }
    }
}

fn need(cols: &[Col], idx: impl Iterator<Item = usize>) -> u32 {
    let mut n = 0u32;
    let mut w = 0u32;
    for i in idx {
        w += cols[i].min as u32;
        n += 1;
    }
    w + n.saturating_sub(1)
}

fn scrollable(cols: &[Col]) -> Vec<usize> {
    (0..cols.len()).filter(|&i| !cols[i].pinned).collect()
}

/// The largest useful sideways offset for `width` columns of room: the one that shows the last
/// column.
pub fn max_offset(cols: &[Col], width: u16) -> usize {
    let pinned: Vec<usize> = (0..cols.len()).filter(|&i| cols[i].pinned).collect();
    let sc = scrollable(cols);
    (0..sc.len())
        .find(|&o| need(cols, pinned.iter().copied().chain(sc[o..].iter().copied())) <= width as u32)
        .unwrap_or(sc.len().saturating_sub(1))
}

/// Lays out `cols` in `width` cells with `offset` scrollable columns hidden on the left (clamped
/// to [`max_offset`]). Columns are separated by one space.
pub fn layout(cols: &[Col], width: u16, offset: usize) -> Shown {
    let offset = offset.min(max_offset(cols, width));
    let sc = scrollable(cols);
    let mut idx: Vec<usize> = (0..cols.len()).filter(|&i| cols[i].pinned).collect();
    for (shown_sc, &i) in sc.iter().skip(offset).enumerate() {
        let mut with = idx.clone();
        with.push(i);
        // at least one scrollable column, even when it must be cut
        if need(cols, with.iter().copied()) > width as u32 && shown_sc > 0 {
            break;
        }
        idx = with;
    }
    idx.sort_unstable();
    let mut widths: Vec<u16> = idx.iter().map(|&i| cols[i].min).collect();
    let used = need(cols, idx.iter().copied());
    let mut spare = (width as u32).saturating_sub(used);
    while spare > 0 {
        // the growing column furthest below its share
        let pick = (0..idx.len())
            .filter(|&p| {
                let c = cols[idx[p]];
                c.grow > 0 && (c.max == 0 || widths[p] < c.max)
            })
            .min_by_key(|&p| (widths[p] as u32 * 100) / cols[idx[p]].grow as u32);
        let Some(p) = pick.or(idx.len().checked_sub(1)) else { break };
        widths[p] += 1;
        spare -= 1;
    }
    let last_sc = sc.last().copied();
    Shown { left: offset > 0, right: last_sc.is_some_and(|l| !idx.contains(&l)), idx, widths }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: [Col; 5] = [
        Col::fixed("!", 1).pinned(),
        Col::flex("NAME", 10, 0, 2).pinned(),
        Col::fixed("A", 20),
        Col::fixed("B", 20),
        Col::flex("C", 10, 30, 1),
    ];

    #[test]
    fn hidden_columns_are_marked_and_reachable() {
        let s = layout(&COLS, 60, 0);
        assert_eq!(s.idx, vec![0, 1, 2, 3]);
        assert_eq!((s.left, s.right, s.mark()), (false, true, " →"));
        assert_eq!(s.widths.iter().sum::<u16>() + 3, 60, "the width is used up");
        assert_eq!(max_offset(&COLS, 60), 1);
        let s = layout(&COLS, 60, 5);
        assert_eq!(s.idx, vec![0, 1, 3, 4], "offset clamped to the one that shows the last column");
        assert_eq!((s.left, s.right, s.mark()), (true, false, " ←"));
        assert_eq!(s.width_of(2), 0);
    }

    #[test]
    fn everything_fits_on_a_wide_pane() {
        let s = layout(&COLS, 120, 0);
        assert_eq!(s.idx.len(), 5);
        assert_eq!(s.mark(), "");
        assert!(s.width_of(4) <= 30, "capped at its max");
        assert!(s.width_of(1) > s.width_of(4), "NAME takes two shares");
        assert_eq!(s.widths.iter().sum::<u16>() + 4, 120);
        assert_eq!(max_offset(&COLS, 120), 0);
    }
}
