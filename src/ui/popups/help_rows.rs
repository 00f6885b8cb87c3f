//! What `?` shows: the keys of the view or popup on top (k9s style), not one list for all.
//! Each table is data; [`for_layer`] picks the one for the layer under the help.

use super::Popup;
use super::training::Screen;
use crate::ui::panes::Pane;

/// One help row: the keys as shown, what they do.
pub use crate::ui::popups::help::{KeyRow, ViewHelp};

/// Keys every pane shares (shown under the pane's own keys).
const GLOBAL: &[KeyRow] = &[
    ("Tab / Shift-Tab", "next / previous pane"),
    ("1..6", "Findings, Nodes, Pods, Volumes, Ceph, Events"),
    (":", "command: :pod :node :pv :va :findings :ns :ctx :fleet :q"),
    ("n", "write a note into the session log (UTC timestamp)"),
    ("?", "this help (Esc or ? closes it)"),
    ("q / Ctrl-C", "quit"),
];

/// Keys of the Findings pane.
const FINDINGS: &[KeyRow] = &[
    ("j k / ↓ ↑", "select a finding"),
    ("g G / PgUp PgDn", "first, last, page"),
    ("Enter", "its evidence, explanation and objects"),
    ("/", "filter the findings (Enter keeps, Esc or Ctrl-C clears)"),
    ("p", "open its playbook (backup first, then each step)"),
    ("u", "undo: open the incident's playbook first"),
];

/// Keys of the Nodes, Pods and Volumes panes (the list panes).
const LIST: &[KeyRow] = &[
    ("j k / ↓ ↑", "select a row (the Ceph and Events panes follow it)"),
    ("g G / PgUp PgDn", "first, last, page"),
    ("← →", "scroll the columns sideways (← → in the title: more columns)"),
    ("/", "filter the pane (Enter keeps, Esc or Ctrl-C clears)"),
    ("d", "describe the selected object (read from the API server now)"),
    ("y", "YAML of the selected object (read from the API server now)"),
    ("Esc", "back from a drill / clear the filter"),
    ("r", "refresh the selected image from Ceph"),
    ("s", "scan all RBD-backed volumes (again: cancel)"),
];

/// Keys of the Ceph and Events panes (scrolling text).
const SCROLLED: &[KeyRow] = &[
    ("j k / ↓ ↑", "scroll"),
    ("g / PgUp PgDn", "top, page"),
    ("/", "show only the lines holding a text (Enter keeps, Esc or Ctrl-C clears)"),
    ("r", "refresh the selected image from Ceph"),
    ("s", "scan all RBD-backed volumes (again: cancel)"),
    ("Esc", "back to the pane you drilled from"),
];

/// Keys of the finding detail overlay.
const DETAIL: &[KeyRow] = &[
    ("j k / ↓ ↑", "select one of the finding's objects"),
    ("Enter", "jump to the selected object in its pane"),
    ("PgDn PgUp / g", "scroll the evidence, top"),
    ("p", "open the finding's playbook"),
    ("/", "close it and filter the findings"),
    ("n", "write a note into the session log"),
    ("Esc", "close"),
    ("q / Ctrl-C", "quit"),
];

/// Keys of the Playbook view.
pub const PLAYBOOK: &[KeyRow] = &[
    ("j k", "select a step"),
    ("Enter / x", "run the selected step (it must be the current one)"),
    ("e", "back up with a full rbd export copy (asks for the file)"),
    ("c", "copy the selected manual step's commands to the clipboard (OSC 52: works over SSH and tmux)"),
    ("s", "skip the current optional step"),
    ("u", "undo the newest undoable step (same confirmation)"),
    ("a", "acknowledge interrupted steps after re-checking"),
    ("o", "type the override the safety rules ask for"),
    ("t", "take over an expired Lease"),
    ("n", "write a note into the session log (UTC timestamp)"),
    ("h", "training: show the hints unlocked so far"),
    ("Esc", "close the playbook (releases the Lease)"),
    (":", "command prompt (:ctx NAME closes the run, releases the Lease)"),
    ("q / Ctrl-C", "quit the console (asks first while a playbook is open)"),
];

/// Keys of the describe / YAML popup.
const DESCRIBE: &[KeyRow] = &[
    ("j k / ↓ ↑", "scroll"),
    ("PgDn PgUp / g G", "page, top, bottom"),
    ("d / y", "switch between describe and YAML"),
    ("Esc / q", "close"),
];

/// Keys of the fleet view.
const FLEET: &[KeyRow] = &[
    ("j k / ↓ ↑", "select a context"),
    ("Enter", "open it in this console (its Lease and journal are the new context's)"),
    ("r", "diagnose every context again"),
    ("Esc / q", "close"),
];

/// Keys of the training screens.
const BRIEFING: &[KeyRow] =
    &[("Enter", "start (simulated time runs from now)"), ("j k / PgDn PgUp", "scroll"), ("q / Ctrl-C", "quit")];
const HINTS: &[KeyRow] = &[("j k / PgDn PgUp", "scroll"), ("Esc / h / Enter", "close the hints"), ("q", "quit")];
const DEBRIEF: &[KeyRow] = &[
    ("j k / PgDn PgUp", "scroll"),
    ("n", "write a note into the session log"),
    ("q / Ctrl-C", "leave (the debrief is printed again on the terminal)"),
];

/// The help of the layer the help covers (`below`; `None`: the panes, `focus` focused), in a
/// training session or not.
pub fn for_layer(below: Option<&Popup>, focus: Pane, training: bool) -> ViewHelp {
    let table = |title: &str, rows: &[KeyRow]| ViewHelp { title: title.into(), rows: rows.to_vec(), about: &[] };
    match below {
        Some(Popup::Training(s)) => {
            return match s.screen {
                Screen::Hints => table("Hints", HINTS),
                Screen::Briefing => table("Briefing", BRIEFING),
                Screen::Debrief => table("Debrief", DEBRIEF),
            };
        }
        Some(Popup::Describe(_)) => return table("Describe / YAML", DESCRIBE),
        Some(Popup::Fleet(_)) => {
            return ViewHelp {
                title: "Fleet".into(),
                rows: FLEET.to_vec(),
                about: &[
                    " Every kubeconfig context diagnosed as `unstick diagnose --all-contexts` does;",
                    " * marks the context this console reads.",
                ],
            };
        }
        Some(Popup::Playbook(_)) => {
            // offer only what can work: no full copy in training, no hints outside it
            let rows =
                PLAYBOOK.iter().filter(|(k, _)| !(training && *k == "e") && (training || *k != "h")).copied().collect();
            return ViewHelp {
                title: "Playbook".into(),
                rows,
                about: &[
                    " Only the current step runs; every Act step waits for the backup (step 1).",
                    " Each write opens a confirmation: y, or the typed name for irreversible ones.",
                ],
            };
        }
        Some(Popup::Detail(_)) => return table("Finding", DETAIL),
        _ => {}
    }
    let own = match focus {
        Pane::Findings => FINDINGS,
        Pane::Nodes | Pane::Volumes => LIST,
        Pane::Pods => &[][..],
        Pane::Ceph | Pane::Events => SCROLLED,
    };
    let mut rows: Vec<KeyRow> = own.to_vec();
    if focus == Pane::Pods {
        rows = LIST.to_vec();
        rows.insert(3, ("a", "all pods / troubled pods only"));
        rows.insert(4, ("Enter", "drill: the pod's volume (then Ceph, then events)"));
    } else if focus == Pane::Nodes {
        rows.insert(4, ("Enter", "the node's pods"));
    } else if focus == Pane::Volumes {
        rows.insert(4, ("Enter", "the volume's image in the Ceph pane"));
    } else if focus == Pane::Ceph {
        rows.insert(2, ("Enter", "the events of the selected object"));
    }
    if training {
        rows.push(("h", "show the hints unlocked so far"));
    }
    rows.extend(GLOBAL.iter().copied());
    let about: &'static [&'static str] = match focus {
        Pane::Findings if training => &[
            " Training: Enter on a finding shows its evidence; p opens its playbook.",
            " The status bar counts goals met; the debrief opens at the end.",
        ],
        Pane::Findings => {
            &[" Diagnosed patterns, most severe first. ! marks rows of other panes whose", " object is in a finding."]
        }
        Pane::Ceph => &[" Watchers, locks and blocklist of the selected image, each address matched", " to its node."],
        _ => &[" Status bar: ✓ live, … listing, stale N = reconnecting, forbidden = 403."],
    };
    ViewHelp { title: focus.title().into(), rows, about }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::app::App;
    use crate::ui::app::tests::incidents_app;

    fn for_view(app: &App) -> ViewHelp {
        for_layer(app.popups().top(), app.focus, app.training.is_some())
    }

    fn keys(app: &App) -> Vec<&'static str> {
        for_view(app).rows.iter().map(|(k, _)| *k).collect()
    }

    #[test]
    fn each_pane_lists_its_own_keys() {
        let mut a = incidents_app(false);
        assert_eq!(for_view(&a).title, "Findings");
        assert!(keys(&a).contains(&"p") && keys(&a).contains(&"/"), "every pane filters: {:?}", keys(&a));
        a.focus = Pane::Pods;
        assert!(keys(&a).contains(&"a") && keys(&a).contains(&"/") && !keys(&a).contains(&"p"));
        a.focus = Pane::Events;
        assert!(keys(&a).contains(&"/") && !keys(&a).contains(&"a"));
        assert!(!keys(&a).contains(&"h"), "no hints outside training");
        a.focus = Pane::Findings;
        a.key(crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Enter));
        assert_eq!(for_view(&a).title, "Finding");
    }

    /// The keys a help label names (`j k / ↓ ↑`, `q / Ctrl-C`, `1..6`), as key presses.
    fn presses(label: &str) -> Vec<crossterm::event::KeyEvent> {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let k = |c| KeyEvent::new(c, KeyModifiers::NONE);
        label
            .split_whitespace()
            .filter(|t| *t != "/")
            .flat_map(|t| match t {
                "↓" => vec![k(KeyCode::Down)],
                "↑" => vec![k(KeyCode::Up)],
                "←" => vec![k(KeyCode::Left)],
                "→" => vec![k(KeyCode::Right)],
                "PgUp" => vec![k(KeyCode::PageUp)],
                "PgDn" => vec![k(KeyCode::PageDown)],
                "Enter" => vec![k(KeyCode::Enter)],
                "Esc" => vec![k(KeyCode::Esc)],
                "Tab" => vec![k(KeyCode::Tab)],
                "Shift-Tab" => vec![k(KeyCode::BackTab)],
                "Ctrl-C" => vec![KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)],
                "1..6" => vec![k(KeyCode::Char('1')), k(KeyCode::Char('6'))],
                t if t.chars().count() == 1 => t.chars().map(|c| k(KeyCode::Char(c))).collect(),
                t => panic!("help names a key this test cannot read: {t}"),
            })
            .collect()
    }

    #[test]
    fn every_key_the_help_names_is_bound_in_its_context() {
        use crate::ui::keys::{KeyContext, map_in};
        let panes = [GLOBAL, FINDINGS, LIST, SCROLLED, DETAIL];
        let extra: &[KeyRow] = &[("a", ""), ("Enter", ""), ("h", "")];
        for (ctx, rows) in panes
            .iter()
            .map(|r| (KeyContext::Panes, *r))
            .chain([(KeyContext::Panes, extra), (KeyContext::Playbook, PLAYBOOK)])
        {
            for (label, what) in rows {
                for p in presses(label) {
                    assert!(map_in(ctx, p).is_some(), "{ctx:?}: `{label}` ({what}) is not bound: {p:?}");
                }
            }
        }
        // and a key the help does not name stays unbound
        let x =
            crossterm::event::KeyEvent::new(crossterm::event::KeyCode::Char('x'), crossterm::event::KeyModifiers::NONE);
        assert_eq!(map_in(KeyContext::Panes, x), None);
        assert!(map_in(KeyContext::Playbook, x).is_some());
    }
}
