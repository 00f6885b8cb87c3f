use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use super::*;
use crate::ui::app::Msg;
use crate::ui::app::tests::incidents_app;

fn mouse(a: &mut App, kind: MouseEventKind, column: u16, row: u16) {
    a.update(Msg::Mouse(MouseEvent { kind, column, row, modifiers: KeyModifiers::NONE }));
}

#[test]
fn a_click_on_a_tab_focuses_its_pane_and_a_click_on_a_row_selects_it() {
    let mut a = incidents_app(false);
    a.update(Msg::Resize(80, 24));
    let tabs_y = a.areas_of(Rect::new(0, 0, 80, 24)).tabs.unwrap().y;
    // ` 1 Findings  2 Nodes  3 Pods ` : x = 24 is inside ` 3 Pods `
    mouse(&mut a, MouseEventKind::Down(MouseButton::Left), 24, tabs_y);
    assert_eq!(a.focus, Pane::Pods);
    let list = a.areas_of(Rect::new(0, 0, 80, 24)).panes[0].1;
    mouse(&mut a, MouseEventKind::Down(MouseButton::Left), 10, list.y + 2 + 2);
    assert_eq!(a.selected_row(Pane::Pods), 2, "third row (under border and header)");
    mouse(&mut a, MouseEventKind::ScrollDown, 10, list.y + 3);
    assert_eq!(a.selected_row(Pane::Pods), 5, "one wheel notch: three rows");
    mouse(&mut a, MouseEventKind::ScrollUp, 10, list.y + 3);
    assert_eq!(a.selected_row(Pane::Pods), 2);
}

#[test]
fn clicks_do_not_reach_the_panes_under_a_popup() {
    let mut a = incidents_app(false);
    a.update(Msg::Resize(80, 24));
    crate::ui::testing::press(&mut a, crossterm::event::KeyCode::Char('?'));
    let tabs_y = a.areas_of(Rect::new(0, 0, 80, 24)).tabs.unwrap().y;
    mouse(&mut a, MouseEventKind::Down(MouseButton::Left), 24, tabs_y);
    assert_eq!(a.focus, Pane::Findings);
    mouse(&mut a, MouseEventKind::ScrollDown, 24, 10);
    let scroll = a.popups().iter().find_map(|p| match p {
        crate::ui::popups::Popup::Help(h) => Some(h.scroll),
        _ => None,
    });
    assert_eq!(scroll, Some(3), "the wheel scrolls the help");
}

#[test]
fn arrows_scroll_columns_sideways_up_to_the_last_one() {
    let mut a = incidents_app(false);
    a.update(Msg::Resize(80, 24));
    a.focus = Pane::Volumes;
    for _ in 0..10 {
        crate::ui::testing::press(&mut a, crossterm::event::KeyCode::Right);
    }
    let max = a.view(Pane::Volumes).hscroll();
    assert!(max > 0 && max < 6, "{max}");
    crate::ui::testing::press(&mut a, crossterm::event::KeyCode::Left);
    assert_eq!(a.view(Pane::Volumes).hscroll(), max - 1, "one ← after many → moves back at once");
}
