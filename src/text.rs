//! Text hygiene for strings that come from the cluster.
//!
//! Everything shown on screen passes through [`sanitize`]: event messages, object names, Ceph
//! output. Kubelet events may embed command output as a Go byte slice (`[114 98 100 58 ...]`,
//! what `fmt` prints for a `[]byte`); [`decode_go_byte_slices`] turns those back into text.

/// Removes control characters and terminal escape sequences from `s`.
///
/// ANSI CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL|ESC \`) and other two-byte escapes are
/// dropped whole; every other control character (C0, DEL, C1) is dropped, except that newlines,
/// carriage returns and tabs become a single space, so a multi-line message stays readable on one
/// table row. Never fails; an unterminated escape sequence is dropped to the end of the string.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\n' | '\r' | '\t' => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            c if c.is_control() => {}
            // Bidirectional overrides can reorder what a reader sees; drop them too.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c => out.push(c),
        }
    }
    out
}

/// `s` made safe for a terminal, keeping its line structure: every line passes through
/// [`sanitize`] (escape sequences and control characters removed), newlines stay. For multi-line
/// error reports on stderr.
pub fn for_terminal(s: &str) -> String {
    s.split('\n').map(|l| sanitize(l.strip_suffix('\r').unwrap_or(l))).collect::<Vec<_>>().join("\n")
}

/// Serialized JSON with every C1 control (U+0080–U+009F) and DEL written as a `\u00XX` escape.
/// serde_json already escapes C0 but leaves these raw, and a terminal acts on U+009B (CSI) as
/// on `ESC [`. Outside strings JSON has no such characters, so the result is the same JSON value.
pub fn json_escape_controls(json: String) -> String {
    if !json.chars().any(|c| c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c)) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `eprintln!` through [`for_terminal`], ignoring write errors (stderr may be a terminal that
/// hung up): the one way the commands print messages that may hold foreign strings.
#[macro_export]
macro_rules! eprintln_safe {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "{}", $crate::text::for_terminal(&format!($($t)*)));
    }};
}

/// `println!` through [`for_terminal`], ignoring write errors (a closed pipe).
#[macro_export]
macro_rules! println_safe {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), "{}", $crate::text::for_terminal(&format!($($t)*)));
    }};
}

/// `print!` through [`for_terminal`], ignoring write errors (a closed pipe).
#[macro_export]
macro_rules! print_safe {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), "{}", $crate::text::for_terminal(&format!($($t)*)));
    }};
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        // CSI: parameters and intermediates, then one final byte in 0x40..=0x7e.
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        // OSC, DCS, SOS, PM, APC: until BEL or ST (ESC \).
        Some(']' | 'P' | 'X' | '^' | '_') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Replaces every Go byte-slice literal in `s` (`[` decimal bytes separated by single spaces `]`,
/// at least four bytes, each 0..=255) with the text it encodes, decoded as UTF-8 (lossy).
///
/// Kubelet prints `rbd output: [114 98 100 58 ...]` when `rbd unmap` fails (seed 003). Bracketed
/// lists that are not byte slices (`[pvc1 default-token]`, `[1 2]`) are left alone. The decoded
/// text may contain newlines; pass the result through [`sanitize`] before display.
pub fn decode_go_byte_slices(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find('[') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find(']').and_then(|end| parse_byte_list(&after[..end]).map(|b| (end, b))) {
            Some((end, bytes)) => {
                out.push_str(&String::from_utf8_lossy(&bytes));
                rest = &after[end + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn parse_byte_list(inner: &str) -> Option<Vec<u8>> {
    if inner.is_empty() || inner.starts_with(' ') || inner.ends_with(' ') || inner.contains("  ") {
        return None;
    }
    let bytes: Option<Vec<u8>> = inner
        .split(' ')
        .map(|t| {
            if t.is_empty() || t.len() > 3 || !t.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                t.parse::<u8>().ok()
            }
        })
        .collect();
    bytes.filter(|b| b.len() >= 4)
}

/// Decodes Go byte slices, then sanitizes: the form every event message is shown and matched in.
pub fn clean_message(s: &str) -> String {
    sanitize(&decode_go_byte_slices(s)).trim().to_string()
}

/// Formats a duration in seconds the way kubectl prints ages: `45s`, `12m`, `3h20m`, `5d`.
/// Negative durations (clock skew) print as `0s`.
pub fn human_age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..=119 => format!("{s}s"),
        120..=3599 => format!("{}m", s / 60),
        3600..=86_399 => {
            let (h, m) = (s / 3600, (s % 3600) / 60);
            if m == 0 || h >= 10 { format!("{h}h") } else { format!("{h}h{m}m") }
        }
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact kubelet line from seed 003.
    const SEED_003: &str = "rbd: failed to unmap device /dev/rbd3, error exit status 16, rbd output: [114 98 100 58 32 115 121 115 102 115 32 119 114 105 116 101 32 102 97 105 108 101 100 10 114 98 100 58 32 117 110 109 97 112 32 102 97 105 108 101 100 58 32 40 49 54 41 32 68 101 118 105 99 101 32 111 114 32 114 101 115 111 117 114 99 101 32 98 117 115 121 10]";

    #[test]
    fn decodes_seed_003_byte_slice() {
        let got = clean_message(SEED_003);
        assert_eq!(
            got,
            "rbd: failed to unmap device /dev/rbd3, error exit status 16, rbd output: rbd: sysfs write failed rbd: unmap failed: (16) Device or resource busy"
        );
    }

    #[test]
    fn leaves_ordinary_brackets_alone() {
        let s = "list of unattached volumes=[pvc1 default-token-97tqr] and [1 2] and [300 1 2 3] and []";
        assert_eq!(decode_go_byte_slices(s), s);
    }

    #[test]
    fn strips_escapes_and_controls() {
        let s = "ok\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}x\u{0}y\u{7f}z\u{9b}w\nnext\u{202e}";
        assert_eq!(sanitize(s), "okred xyzw next");
        assert_eq!(sanitize("\u{1b}[31"), "");
    }

    #[test]
    fn for_terminal_keeps_lines_only() {
        assert_eq!(for_terminal("a\u{1b}]0;t\u{7}b\r\n\u{9b}2Jc\u{7f}\n"), "ab\n2Jc\n");
    }

    #[test]
    fn json_controls_are_escaped() {
        let v = serde_json::json!({"k\u{9b}": "a\u{1b}[2J\u{9b}31m\u{7f}\u{85}é"});
        let out = json_escape_controls(serde_json::to_string(&v).unwrap());
        assert!(!out.chars().any(char::is_control), "{out}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap(), v);
    }

    #[test]
    fn ages() {
        assert_eq!(human_age(-5), "0s");
        assert_eq!(human_age(59), "59s");
        assert_eq!(human_age(600), "10m");
        assert_eq!(human_age(3600 + 1200), "1h20m");
        assert_eq!(human_age(40_000), "11h");
        assert_eq!(human_age(200_000), "2d");
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_output_has_no_controls(s in ".*") {
            let out = clean_message(&s);
            proptest::prop_assert!(!out.chars().any(|c| c.is_control()));
        }
    }
}
