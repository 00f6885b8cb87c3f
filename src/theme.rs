//! Colour themes: `themes/*.toml`, embedded in the binary. `NO_COLOR` (any non-empty value,
//! <https://no-color.org>) replaces every colour with the terminal default; selection and badges
//! then use reverse video and bold instead.

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../themes/default.toml")),
    ("light", include_str!("../themes/light.toml")),
    ("high-contrast", include_str!("../themes/high-contrast.toml")),
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    text: String,
    muted: String,
    accent: String,
    ok: String,
    warn: String,
    error: String,
    border: String,
    border_focused: String,
    selected_fg: String,
    selected_bg: String,
    badge_fg: String,
    badge_bg: String,
    title: String,
}

/// Resolved styles used by every view.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// Plain text.
    pub text: Style,
    /// Secondary text (ages, hints).
    pub muted: Style,
    /// Headers and keys in help.
    pub accent: Style,
    /// Healthy state (Ready, live).
    pub ok: Style,
    /// Degraded state (stale, Terminating).
    pub warn: Style,
    /// Broken state (NotReady, errors, forbidden).
    pub error: Style,
    /// Border of an unfocused pane.
    pub border: Style,
    /// Border of the focused pane.
    pub border_focused: Style,
    /// Selected row.
    pub selected: Style,
    /// The READ-ONLY badge.
    pub badge: Style,
    /// Pane titles.
    pub title: Style,
}

impl Theme {
    /// The built-in theme `name`, or `None` if there is none of that name.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        Self::parse(text).ok()
    }

    /// Names of the built-in themes.
    pub fn names() -> impl Iterator<Item = &'static str> {
        BUILTIN.iter().map(|(n, _)| *n)
    }

    /// Parses a theme file; errors name the bad key or colour.
    pub fn parse(text: &str) -> Result<Theme, String> {
        let f: ThemeFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let c = |s: &str| s.parse::<Color>().map_err(|_| format!("not a colour: {s:?}"));
        let fg = |s: &str| -> Result<Style, String> { Ok(Style::new().fg(c(s)?)) };
        Ok(Theme {
            text: fg(&f.text)?,
            muted: fg(&f.muted)?,
            accent: fg(&f.accent)?.add_modifier(Modifier::BOLD),
            ok: fg(&f.ok)?,
            warn: fg(&f.warn)?,
            error: fg(&f.error)?.add_modifier(Modifier::BOLD),
            border: fg(&f.border)?,
            border_focused: fg(&f.border_focused)?,
            selected: Style::new().fg(c(&f.selected_fg)?).bg(c(&f.selected_bg)?),
            badge: Style::new().fg(c(&f.badge_fg)?).bg(c(&f.badge_bg)?).add_modifier(Modifier::BOLD),
            title: fg(&f.title)?.add_modifier(Modifier::BOLD),
        })
    }

    /// A theme without any colour, for `NO_COLOR`.
    pub fn monochrome() -> Theme {
        let s = Style::new();
        Theme {
            text: s,
            muted: s.add_modifier(Modifier::DIM),
            accent: s.add_modifier(Modifier::BOLD),
            ok: s,
            warn: s.add_modifier(Modifier::BOLD),
            error: s.add_modifier(Modifier::BOLD),
            border: s,
            border_focused: s.add_modifier(Modifier::BOLD),
            selected: s.add_modifier(Modifier::REVERSED),
            badge: s.add_modifier(Modifier::REVERSED | Modifier::BOLD),
            title: s.add_modifier(Modifier::BOLD),
        }
    }

    /// The configured theme, or [`Theme::monochrome`] when `no_color` is set.
    pub fn resolve(name: &str, no_color: bool) -> Theme {
        if no_color {
            return Self::monochrome();
        }
        Self::builtin(name).unwrap_or_else(Self::monochrome)
    }
}

/// True when the `NO_COLOR` environment variable is set to a non-empty value.
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_builtin_themes_parse() {
        for (name, text) in BUILTIN {
            Theme::parse(text).unwrap_or_else(|e| panic!("theme {name}: {e}"));
        }
        assert!(Theme::builtin("nope").is_none());
        // the names the configuration accepts are exactly the embedded themes
        assert_eq!(Theme::names().collect::<Vec<_>>(), unstick_core::config::THEME_NAMES);
    }

    #[test]
    fn bad_theme_is_an_error() {
        let text = include_str!("../themes/default.toml").replace("\"cyan\"", "\"not-a-colour\"");
        assert!(Theme::parse(&text).unwrap_err().contains("not-a-colour"));
        assert!(Theme::parse("text = 1").is_err());
    }

    /// xterm's default palette for the 16 named colours, sRGB.
    fn rgb(c: Color, default: (u8, u8, u8)) -> (u8, u8, u8) {
        match c {
            Color::Rgb(r, g, b) => (r, g, b),
            Color::Reset => default,
            Color::Black => (0, 0, 0),
            Color::Red => (205, 0, 0),
            Color::Green => (0, 205, 0),
            Color::Yellow => (205, 205, 0),
            Color::Blue => (0, 0, 238),
            Color::Magenta => (205, 0, 205),
            Color::Cyan => (0, 205, 205),
            Color::Gray => (229, 229, 229),
            Color::DarkGray => (127, 127, 127),
            Color::LightRed => (255, 0, 0),
            Color::LightGreen => (0, 255, 0),
            Color::LightYellow => (255, 255, 0),
            Color::LightBlue => (92, 92, 255),
            Color::LightMagenta => (255, 0, 255),
            Color::LightCyan => (0, 255, 255),
            Color::White => (255, 255, 255),
            Color::Indexed(i) => panic!("indexed colour {i}: give the theme #rrggbb so its contrast can be checked"),
        }
    }

    /// WCAG 2 relative luminance.
    fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
        let lin = |c: u8| {
            let c = c as f64 / 255.0;
            if c <= 0.03928 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
        };
        0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    }

    fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
        let (x, y) = (luminance(a), luminance(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn every_theme_has_wcag_aa_contrast_against_its_background() {
        for (name, text) in BUILTIN {
            let t = Theme::parse(text).unwrap();
            // the light theme is for white terminals, the others for black ones (xterm palette)
            let (bg, fg) = if *name == "light" { ((255, 255, 255), (0, 0, 0)) } else { ((0, 0, 0), (229, 229, 229)) };
            let on_bg = [
                ("text", t.text),
                ("muted", t.muted),
                ("accent", t.accent),
                ("ok", t.ok),
                ("warn", t.warn),
                ("error", t.error),
                ("border", t.border),
                ("border_focused", t.border_focused),
                ("title", t.title),
            ];
            for (what, s) in on_bg {
                let c = contrast(rgb(s.fg.unwrap_or(Color::Reset), fg), bg);
                assert!(c >= 4.5, "theme {name}: {what} has contrast {c:.2}:1 against the background (needs 4.5:1)");
            }
            for (what, s) in [("selected", t.selected), ("badge", t.badge)] {
                let c = contrast(rgb(s.fg.unwrap_or(Color::Reset), fg), rgb(s.bg.unwrap_or(Color::Reset), bg));
                assert!(c >= 4.5, "theme {name}: {what} has contrast {c:.2}:1 (needs 4.5:1)");
            }
        }
        assert!(
            contrast((229, 229, 229), (255, 255, 255)) < 4.5,
            "the old light-theme gray fails, as the test must see"
        );
    }

    #[test]
    fn monochrome_has_no_colours() {
        let t = Theme::monochrome();
        for s in [t.text, t.ok, t.error, t.selected, t.badge] {
            assert!(s.fg.is_none() && s.bg.is_none());
        }
    }
}
