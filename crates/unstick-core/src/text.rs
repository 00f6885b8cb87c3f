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

/// How much of a message [`decode_go_byte_slices`] examines, in bytes: 64 KiB. Kubelet embeds
/// `rbd`'s output (a few hundred bytes, at most 4 characters per byte as a Go slice) in one event;
/// 64 KiB holds a 16 KiB command output. The rest of a longer message is kept as it is (still
/// sanitized for display), so a hostile or runaway message costs at most this much decoding work.
pub const MAX_DECODED_PREFIX: usize = 64 * 1024;

/// Replaces every Go byte-slice literal in `s` (`[` decimal bytes `]`, at least four bytes, each
/// 0..=255, as `fmt` prints a `[]byte`) with the text it encodes, decoded as UTF-8 (lossy).
///
/// Kubelet prints `rbd output: [114 98 100 58 ...]` when `rbd unmap` fails (seed 003). Bracketed
/// lists that are not byte slices (`[pvc1 default-token]`, `[1 2]`) are left alone. A slice
/// wrapped by a terminal or a web page is read too: a line break (with or without indentation) may
/// stand for a separating space, and a bare line break inside a number (`1\n00`, a hard wrap at
/// the terminal's width) is joined when reading it as a separator would give an invalid byte.
///
/// Linear in `s.len()`: each byte is examined at most twice, and only the first
/// [`MAX_DECODED_PREFIX`] bytes are examined at all. The decoded text may contain newlines; pass
/// the result through [`sanitize`] before display.
pub fn decode_go_byte_slices(s: &str) -> String {
    decode_counting(s, &mut 0)
}

/// [`decode_go_byte_slices`], adding to `work` one for every byte it examines (the scan, and each
/// candidate list handed to the list parser): tests assert the linear bound on this count
/// instead of on time.
fn decode_counting(s: &str, work: &mut usize) -> String {
    let b = s.as_bytes();
    let mut limit = s.len().min(MAX_DECODED_PREFIX);
    while !s.is_char_boundary(limit) {
        limit -= 1;
    }
    let mut out = String::with_capacity(s.len());
    let (mut i, mut copied) = (0, 0);
    while i < limit {
        *work += 1;
        if b[i] != b'[' {
            i += 1;
            continue;
        }
        // Only digits and whitespace may follow; the scan stops at anything else (including the
        // next `[`), so scanned stretches never overlap.
        let mut j = i + 1;
        while j < limit && (b[j].is_ascii_digit() || matches!(b[j], b' ' | b'\t' | b'\r' | b'\n')) {
            *work += 1;
            j += 1;
        }
        if j < limit && b[j] == b']' {
            *work += j - i - 1;
        }
        if j < limit
            && b[j] == b']'
            && let Some(bytes) = parse_byte_list(&s[i + 1..j])
        {
            out.push_str(&s[copied..i]);
            out.push_str(&String::from_utf8_lossy(&bytes));
            copied = j + 1;
            i = j + 1;
            continue;
        }
        i = j;
    }
    out.push_str(&s[copied..]);
    out
}

/// A whitespace run between two numbers of a byte list.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// One space: Go's own separator.
    Space,
    /// A line break, with spaces or indentation around it: a wrap at a space.
    Wrap,
    /// A line break alone (`\n`, `\r\n`): a wrap at a space or inside a number.
    BareBreak,
}

/// Parses the inside of `[...]` (digits and whitespace only) as Go prints a `[]byte`, allowing the
/// wrapping described at [`decode_go_byte_slices`]. `None` when it is not a byte slice.
fn parse_byte_list(inner: &str) -> Option<Vec<u8>> {
    let is_ws = |c: char| c.is_ascii_whitespace();
    let has_break = |w: &str| w.contains(['\n', '\r']);
    // Leading or trailing whitespace only as a wrap right after `[` or before `]`.
    let lead = &inner[..inner.len() - inner.trim_start_matches(is_ws).len()];
    let trail = &inner[inner.trim_end_matches(is_ws).len()..];
    if (!lead.is_empty() && !has_break(lead)) || (!trail.is_empty() && !has_break(trail)) {
        return None;
    }
    let body = inner.trim_matches(is_ws);
    let mut tokens: Vec<&str> = vec![];
    let mut seps: Vec<Sep> = vec![];
    let mut rest = body;
    while !rest.is_empty() {
        let n = rest.find(is_ws).unwrap_or(rest.len());
        tokens.push(&rest[..n]);
        rest = &rest[n..];
        let w = rest.len() - rest.trim_start_matches(is_ws).len();
        if w > 0 {
            let run = &rest[..w];
            seps.push(match (has_break(run), run.trim_matches(['\r', '\n']).is_empty()) {
                (false, _) if run == " " => Sep::Space,
                (false, _) => return None, // two spaces, a tab: not Go's output
                (true, true) => Sep::BareBreak,
                (true, false) => Sep::Wrap,
            });
            rest = &rest[w..];
        }
    }
    let read = |join_bare: bool| -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(tokens.len());
        let mut cur = String::new();
        for (k, t) in tokens.iter().enumerate() {
            cur.push_str(t);
            if join_bare && seps.get(k) == Some(&Sep::BareBreak) {
                continue;
            }
            out.push(byte_token(&cur)?);
            cur.clear();
        }
        Some(out)
    };
    read(false).or_else(|| read(true)).filter(|b| b.len() >= 4)
}

/// One decimal byte as Go prints it: 1–3 digits, no leading zero, at most 255.
fn byte_token(t: &str) -> Option<u8> {
    if t.is_empty() || t.len() > 3 || (t.len() > 1 && t.starts_with('0')) || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
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

/// A plain-text table: each column as wide as its widest cell in display columns (wide and
/// combining characters counted as the terminal shows them), two spaces between columns, the
/// columns flagged in `right` right-aligned, trailing blanks trimmed. One line per row, each
/// ending in `\n`; the first row is usually the header.
pub fn table(rows: &[Vec<String>], right: &[bool]) -> String {
    use unicode_width::UnicodeWidthStr;
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..n).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.width()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, w) in widths.iter().enumerate() {
            let cell = r.get(c).map(String::as_str).unwrap_or("");
            let pad = " ".repeat(w.saturating_sub(cell.width()));
            if c > 0 {
                line.push_str("  ");
            }
            if right.get(c).copied().unwrap_or(false) {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_columns_align_on_display_width() {
        let rows = vec![
            vec!["ID".to_string(), "N".into(), "CTX".into()],
            vec!["20261122t051500z-training-node-loss-five-volumes-3f9a".into(), "12".into(), "train:x".into()],
            vec!["s-日本".into(), "3".into(), "kh".into()],
        ];
        let t = table(&rows, &[false, true, false]);
        let lines: Vec<&str> = t.lines().collect();
        let col = |l: &str| unicode_width::UnicodeWidthStr::width(&l[..l.rfind("  ").unwrap()]);
        assert_eq!(col(lines[0]), col(lines[1]));
        assert_eq!(col(lines[1]), col(lines[2]), "wide characters count twice: {t}");
        assert!(lines[2].contains("   3  kh"), "right-aligned numbers: {t}");
    }

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

    /// Seed 003's slice as a terminal or a web page wraps it: at a space (with indentation), right
    /// after `[`, and inside a number (a hard wrap at the terminal's width).
    #[test]
    fn decodes_wrapped_byte_slices() {
        let want = clean_message(SEED_003);
        let wrapped = SEED_003
            .replace("58 32 115", "58\n    32 115")
            .replace("[114 98", "[\n114 98")
            .replace("100 58 32 117", "1\n00 58 32 117");
        assert_eq!(clean_message(&wrapped), want);
        let crlf = SEED_003.replace(" 121 115 ", " 121\r\n115 ");
        assert_eq!(clean_message(&crlf), want);
        // Still not a byte slice: two spaces, a tab, a number over 255 or with a leading zero.
        for s in ["[114  98 100 58]", "[114\t98 100 58]", "[314 98 100 58]", "[114 098 100 58]", "[ 114 98 100 58]"] {
            assert_eq!(decode_go_byte_slices(s), s);
        }
    }

    /// Issue 10: 400k `[` took 3.9 s and 1M over 20 s (quadratic). Linear now: this runs in
    /// milliseconds (`cargo bench --bench diagnose decode` prints the figures).
    #[test]
    fn many_open_brackets_are_left_alone() {
        let s = "[".repeat(1_000_000);
        assert_eq!(decode_go_byte_slices(&s), s);
        let s = "[1 2 3 4 5 6 ".repeat(100_000);
        assert_eq!(decode_go_byte_slices(&s), s);
    }

    /// Issue 10 regression, by counting work rather than timing: on adversarial shapes (open
    /// brackets, lists never closed, nested openings, long valid lists) the bytes examined stay
    /// under 3 per input byte, and under 3 per byte of the [`MAX_DECODED_PREFIX`] for 1 MB inputs.
    #[test]
    fn decoding_work_is_linear_and_capped() {
        let shapes: [&dyn Fn(usize) -> String; 6] = [
            &|n| "[".repeat(n),
            &|n| "[1 2 3 4 5 6 ".repeat(n / 12 + 1),
            &|n| "[1 [2 [3 ".repeat(n / 9 + 1),
            &|n| format!("[{}]", "114 ".repeat(n / 4)),
            &|n| "[114 98 100 58]".repeat(n / 15 + 1),
            &|n| format!("[{}", " ".repeat(n)),
        ];
        for (k, shape) in shapes.iter().enumerate() {
            for n in [1_000, 8_000, 60_000, 1_000_000] {
                let s = shape(n);
                let mut work = 0;
                let _ = decode_counting(&s, &mut work);
                let bound = 3 * s.len().min(MAX_DECODED_PREFIX) + 8;
                assert!(work <= bound, "shape {k}, {} bytes: {work} steps > {bound}", s.len());
            }
        }
    }

    /// Only the first [`MAX_DECODED_PREFIX`] bytes are examined; the rest is kept as it is.
    #[test]
    fn decoding_stops_at_the_cap() {
        let slice = "[114 98 100 58]";
        let head = "x".repeat(MAX_DECODED_PREFIX - 20);
        assert_eq!(decode_go_byte_slices(&format!("{head}{slice}")), format!("{head}rbd:"));
        let head = "é".repeat(MAX_DECODED_PREFIX / 2); // the cap falls inside no character
        let s = format!("{head}{slice}");
        assert_eq!(decode_go_byte_slices(&s), s);
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
        // fuzz target of issue 10: the event decoder (cases: UNSTICK_FUZZ_CASES, else 5000)
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::fuzz_cases(5000)))]
        #[test]
        fn never_panics_and_output_has_no_controls(s in ".*") {
            let out = clean_message(&s);
            proptest::prop_assert!(!out.chars().any(|c| c.is_control()));
        }

        /// Byte-slice-like garbage: digits, brackets and whitespace in any order.
        #[test]
        fn decoder_never_panics_on_slice_like_input(s in "[\\[\\]0-9 \\n\\r\\t]{0,400}") {
            let out = decode_go_byte_slices(&s);
            proptest::prop_assert!(out.len() <= s.len() * 2 + 8);
        }

        /// Any list of bytes Go prints decodes back to those bytes, wrapped or not.
        #[test]
        fn go_printed_slices_round_trip(bytes in proptest::collection::vec(32u8..127, 4..64), wrap in 1usize..40) {
            let printed: Vec<String> = bytes.iter().map(u8::to_string).collect();
            let want = String::from_utf8(bytes).unwrap();
            proptest::prop_assert_eq!(decode_go_byte_slices(&format!("[{}]", printed.join(" "))), want.clone());
            // A web page wraps at a space every `wrap` numbers.
            let mut s = String::from("[");
            for (k, t) in printed.iter().enumerate() {
                if k > 0 {
                    s.push_str(if k % wrap == 0 { "\n  " } else { " " });
                }
                s.push_str(t);
            }
            s.push(']');
            proptest::prop_assert_eq!(decode_go_byte_slices(&s), want);
        }
    }
}
