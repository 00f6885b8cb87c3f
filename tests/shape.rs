//! Checks of the code's shape that anyone can rerun (`cargo test --test shape`), read from the
//! sources of both crates, the console's `src/` and the core's `crates/unstick-core/src/` (no build
//! needed; their module names do not overlap, so both are one graph here):
//!
//! - **import cycles** between files, from every `crate::…`, `super::…` and `self::…` path (in
//!   `use` lines and inline), each resolved to the file that defines the item: a `pub use`
//!   re-export is followed to its source, and an edge to or from a `mod.rs` counts like any other;
//! - **layers** of the core ([`CORE_LAYERS`]): a file imports from its own layer and below only;
//! - **UI dependencies** of `remedy` (the remediation service included), `session`, `sources`,
//!   `model` and `diagnose`: none, neither `ui` modules nor terminal crates;
//! - **`Timestamp::now()`** outside the wall clock's implementation;
//! - **file length**: no source file over [`MAX_LINES`];
//! - **repeated blocks**: no run of [`MIN_REPEAT`] significant lines (blank lines, comments, `use`
//!   lines and lone punctuation skipped; white space folded) stands twice in non-test code.
//!
//! The tree is not there yet (issue 11): what exists today is listed in `KNOWN_*` below, and each
//! check fails on anything new or grown. A list entry that no longer holds fails too, so the lists
//! only shrink.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest source file allowed, in lines.
const MAX_LINES: usize = 600;

/// Shortest run of identical significant lines that counts as a repeated block.
const MIN_REPEAT: usize = 10;

/// Import cycles that exist today (each a sorted set of modules); none may be added.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// Files over [`MAX_LINES`] today, with their current length as the most they may grow to.
const KNOWN_LONG: &[(&str, usize)] = &[];

/// `Timestamp::now()` calls outside the clock today, per file, as the most each may have.
const KNOWN_NOW: &[(&str, usize)] = &[];

/// Files where `Timestamp::now()` belongs: the wall clock's implementation.
const CLOCK_FILES: &[&str] = &["crates/unstick-core/src/clock.rs"];

/// The source roots, relative to the console crate: its own and the core's.
const ROOTS: &[&str] = &["src", "crates/unstick-core/src"];

struct Source {
    /// Path relative to the console crate's root, e.g. `src/ui/app.rs`,
    /// `crates/unstick-core/src/model/mod.rs`.
    rel: String,
    /// Module path, e.g. `ui::app` (`crate` for lib.rs/main.rs).
    module: String,
    text: String,
    /// A file of unit tests only (`*tests.rs`).
    test_only: bool,
}

/// Every source file under [`ROOTS`].
fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![];
    let mut stack: Vec<PathBuf> = ROOTS.iter().map(|r| root.join(r)).collect();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read src dir") {
            let p: PathBuf = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/");
                let text = std::fs::read_to_string(&p).expect("read source");
                out.push(Source { module: module_of(&rel), test_only: rel.ends_with("tests.rs"), rel, text });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// `src/ui/app.rs` → `ui::app`; `src/ui/mod.rs` → `ui`; `src/lib.rs` → `crate`;
/// `crates/unstick-core/src/model/mod.rs` → `model`.
fn module_of(rel: &str) -> String {
    let p = rel.trim_start_matches("crates/unstick-core/").trim_start_matches("src/").trim_end_matches(".rs");
    let p = p.trim_end_matches("/mod");
    if p == "lib" || p == "main" { "crate".into() } else { p.replace('/', "::") }
}

/// Strips `//` comments (outside string literals, roughly) so doc examples do not count.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(|l| match l.find("//") {
        Some(i) if !l[..i].contains('"') => &l[..i],
        _ => l,
    })
}

/// The text after `#[cfg(test)]\nmod tests` is test code: not part of the module graph.
fn non_test(text: &str) -> &str {
    match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// Every module path referenced from `src`: `crate::a::b::{c, d::e}` (or `unstick_core::…` from the
/// console) gives `a::b::c`, `a::b::d::e`; `super::x` is resolved against the file's module.
fn references(src: &Source) -> Vec<String> {
    let code: String = code_lines(non_test(&src.text)).collect::<Vec<_>>().join("\n");
    let mut out = vec![];
    for (prefix, base) in
        [("crate::", String::new()), ("unstick_core::", String::new()), ("super::", parent(&src.module))]
    {
        let mut rest = code.as_str();
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().last();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            expand(&base, rest, &mut out);
        }
    }
    out
}

/// The module `super` names from `module` (its parent; `""` is the crate root).
fn parent(module: &str) -> String {
    module.rsplit_once("::").map(|p| p.0.to_string()).unwrap_or_default()
}

/// Expands one path (possibly with `{…}` groups) that starts at `text` into module paths.
fn expand(base: &str, text: &str, out: &mut Vec<String>) {
    let mut path = String::new();
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            path.push(c);
            continue;
        }
        if c == '{' && (path.is_empty() || path.ends_with("::")) {
            // split the group at top-level commas
            let mut depth = 0;
            let mut start = i + 1;
            let bytes = text.as_bytes();
            let mut j = i + 1;
            while j < bytes.len() {
                match bytes[j] {
                    b'{' => depth += 1,
                    b'}' if depth == 0 => {
                        let item = text[start..j].trim();
                        if !item.is_empty() {
                            expand(&join(base, &path), item, out);
                        }
                        return;
                    }
                    b'}' => depth -= 1,
                    b',' if depth == 0 => {
                        let item = text[start..j].trim();
                        if !item.is_empty() {
                            expand(&join(base, &path), item, out);
                        }
                        start = j + 1;
                    }
                    _ => {}
                }
                j += 1;
            }
            return;
        }
        break;
    }
    let path = path.trim_end_matches("::");
    if !path.is_empty() && path != "self" {
        out.push(join(base, path.trim_end_matches("::self")));
    }
}

fn join(base: &str, path: &str) -> String {
    let path = path.trim_end_matches("::");
    match (base.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (_, true) => base.to_string(),
        _ => format!("{base}::{path}"),
    }
}

/// The longest known module that `path` starts with.
fn resolve<'a>(path: &str, modules: &'a BTreeSet<String>) -> Option<&'a String> {
    let mut p = path.to_string();
    loop {
        if let Some(m) = modules.get(&p) {
            return Some(m);
        }
        p = p.rsplit_once("::")?.0.to_string();
    }
}

fn ancestor(a: &str, b: &str) -> bool {
    a == "crate" || b.starts_with(&format!("{a}::"))
}

/// Strongly connected components of more than one module (Tarjan), each sorted.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<Vec<String>> {
    struct T<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: BTreeSet<Vec<String>>,
    }
    fn visit<'g>(t: &mut T<'g>, v: &'g str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = vec![];
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.insert(comp);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        out: BTreeSet::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn graph(srcs: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = srcs.iter().map(|s| s.module.clone()).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in srcs.iter().filter(|s| !s.rel.ends_with("main.rs") && !s.test_only) {
        for r in references(s) {
            let Some(to) = resolve(&r, &modules) else { continue };
            if *to != s.module && !ancestor(to, &s.module) && !ancestor(&s.module, to) {
                g.entry(s.module.clone()).or_default().insert(to.clone());
            }
        }
    }
    g
}

#[test]
fn no_new_import_cycle() {
    let found = cycles(&file_graph(&sources()));
    let known: BTreeSet<Vec<String>> = KNOWN_CYCLES.iter().map(|c| c.iter().map(|s| s.to_string()).collect()).collect();
    for c in &found {
        eprintln!("cycle: {}", c.join(" ↔ "));
    }
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(new.is_empty(), "import cycles not in KNOWN_CYCLES (break them, don't list them): {new:#?}");
    assert!(gone.is_empty(), "cycles in KNOWN_CYCLES that no longer exist (remove them from the list): {gone:#?}");
}

/// The compiler keeps the core free of the UI: the core crate cannot name the console's modules,
/// and its manifest must not list a terminal crate.
#[test]
fn the_core_crate_has_no_terminal_dependency() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/unstick-core/Cargo.toml"))
            .expect("read the core's manifest");
    for krate in ["ratatui", "crossterm", "ratatui-textarea", "clap"] {
        assert!(
            !manifest.lines().any(|l| l.trim_start().starts_with(&format!("{krate} "))
                || l.trim_start().starts_with(&format!("{krate}="))),
            "crates/unstick-core/Cargo.toml lists {krate}: the core must build without a terminal"
        );
    }
}

/// Modules that know no UI: their files import nothing from `ui` (by `crate::`/`super::` paths,
/// resolved as for the cycle check) and name no terminal crate.
const NO_UI: &[&str] = &["remedy", "session", "sources", "model", "diagnose", "train", "config", "lineage"];

#[test]
fn remediation_and_sources_know_no_ui() {
    let srcs = sources();
    let g = graph(&srcs);
    let under = |m: &str, root: &str| m == root || m.starts_with(&format!("{root}::"));
    let mut bad = vec![];
    for s in srcs.iter().filter(|s| NO_UI.iter().any(|r| under(&s.module, r))) {
        for to in g.get(&s.module).into_iter().flatten().filter(|to| under(to, "ui")) {
            bad.push(format!("{} imports {to}", s.rel));
        }
        for krate in ["ratatui", "crossterm"] {
            if code_lines(non_test(&s.text)).any(|l| l.contains(&format!("{krate}::"))) {
                bad.push(format!("{} names {krate}", s.rel));
            }
        }
    }
    assert!(bad.is_empty(), "UI dependencies where none belong: {bad:#?}");
}

#[test]
fn no_source_file_grows_past_the_limit() {
    let mut bad = vec![];
    let mut seen = BTreeSet::new();
    for s in sources() {
        let n = s.text.lines().count();
        let allowed = KNOWN_LONG.iter().find(|(f, _)| *f == s.rel).map(|(_, n)| *n);
        if allowed.is_some() {
            seen.insert(s.rel.clone());
        }
        match allowed {
            Some(max) if n > max => bad.push(format!("{} has {n} lines (listed at {max}; split it)", s.rel)),
            Some(max) if n <= MAX_LINES => {
                bad.push(format!("{} has {n} lines: remove it from KNOWN_LONG ({max})", s.rel))
            }
            None if n > MAX_LINES => bad.push(format!("{} has {n} lines (limit {MAX_LINES}; split it)", s.rel)),
            _ => {}
        }
    }
    for (f, _) in KNOWN_LONG {
        if !seen.contains(*f) {
            bad.push(format!("{f} is in KNOWN_LONG but does not exist"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// How often a line reads the wall clock: `Timestamp::now()` or `Timestamp::now` passed as a
/// function (`unwrap_or_else(Timestamp::now)`); `Timestamp::now_x` would not count.
fn reads_wall_clock(line: &str) -> usize {
    line.match_indices("Timestamp::now")
        .filter(|(i, m)| !line[i + m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        .count()
}

#[test]
fn timestamp_now_only_in_the_clock() {
    let mut bad = vec![];
    for s in sources() {
        if s.test_only || CLOCK_FILES.contains(&s.rel.as_str()) {
            continue;
        }
        let n = code_lines(non_test(&s.text)).map(reads_wall_clock).sum::<usize>();
        let allowed = KNOWN_NOW.iter().find(|(f, _)| *f == s.rel).map(|(_, n)| *n).unwrap_or(0);
        if n > allowed {
            bad.push(format!("{}: {n} Timestamp::now() (allowed {allowed}): take the injected clock", s.rel));
        } else if n < allowed {
            bad.push(format!("{}: {n} Timestamp::now(), listed as {allowed}: lower KNOWN_NOW", s.rel));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[cfg(test)]
mod parse {
    use super::*;

    #[test]
    fn groups_and_super_expand_to_modules() {
        let mut out = vec![];
        expand("", "ui::{app::{App, Msg}, keys}, x", &mut out);
        assert_eq!(out, vec!["ui::app::App", "ui::app::Msg", "ui::keys"]);
        assert_eq!(parent("remedy::run"), "remedy");
        assert_eq!(parent("sources::sim"), "sources");
        assert_eq!(module_of("src/ui/mod.rs"), "ui");
        assert_eq!(module_of("crates/unstick-core/src/sources/sim/mod.rs"), "sources::sim");
    }

    #[test]
    fn a_two_module_cycle_is_found() {
        let mut g = BTreeMap::new();
        g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
        g.insert("b".to_string(), BTreeSet::from(["a".to_string(), "c".to_string()]));
        assert_eq!(cycles(&g), BTreeSet::from([vec!["a".to_string(), "b".to_string()]]));
    }
}

/// A line that carries code: not blank, not a comment, not a `use` line, not lone punctuation
/// (`}`, `});`, `],`), with white space folded.
fn significant(line: &str) -> Option<String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with("//") || t.starts_with("use ") || t.starts_with("pub use ") {
        return None;
    }
    if t.chars().all(|c| "{}()[];,.".contains(c)) {
        return None;
    }
    Some(t.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[test]
fn no_repeated_block_outside_tests() {
    // (file, first line number) of every window of MIN_REPEAT significant lines, by its text
    let mut seen: BTreeMap<Vec<String>, Vec<(String, usize)>> = BTreeMap::new();
    for s in sources().iter().filter(|s| !s.test_only) {
        let lines: Vec<(usize, String)> =
            non_test(&s.text).lines().enumerate().filter_map(|(i, l)| significant(l).map(|t| (i + 1, t))).collect();
        for w in lines.windows(MIN_REPEAT) {
            let key: Vec<String> = w.iter().map(|(_, t)| t.clone()).collect();
            seen.entry(key).or_default().push((s.rel.clone(), w[0].0));
        }
    }
    let mut bad: Vec<String> = seen
        .values()
        .filter(|at| at.len() > 1)
        .map(|at| at.iter().map(|(f, l)| format!("{f}:{l}")).collect::<Vec<_>>().join(" = "))
        .collect();
    bad.dedup();
    assert!(
        bad.is_empty(),
        "blocks of {MIN_REPEAT}+ identical lines in more than one place (share one function):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_repeat_check_can_fail() {
    let block: String = (0..MIN_REPEAT).map(|i| format!("let x{i} = f({i});\n")).collect();
    let a: Vec<String> = block.lines().filter_map(significant).collect();
    let b: Vec<String> = format!("// note\n\n{block}}}\n").lines().filter_map(significant).collect();
    assert_eq!(a, b, "comments, blank lines and lone braces are skipped, so the two copies match");
    assert_eq!(significant("   let  y =   1;"), Some("let y = 1;".into()));
    assert_eq!(reads_wall_clock("a.unwrap_or_else(Timestamp::now); Timestamp::now()"), 2);
    assert_eq!(reads_wall_clock("Timestamp::now_utc"), 0);
}

// ---- file-level import graph (issue 23): re-exports resolved, ancestors counted ----------------

/// Every path named from `src` as [`references`] gives them, plus `self::…` paths and chains of
/// `super::super::…`, each as a full module path (`session::log::Event`).
fn file_references(src: &Source) -> Vec<String> {
    let code: String = code_lines(non_test(&src.text)).collect::<Vec<_>>().join("\n");
    let mut out = vec![];
    for prefix in ["crate::", "unstick_core::", "super::", "self::"] {
        let mut rest = code.as_str();
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().last();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base = match prefix {
                "super::" => parent(&src.module),
                "self::" => src.module.clone(),
                _ => String::new(),
            };
            let mut tail = rest;
            while prefix == "super::" && tail.starts_with("super::") {
                base = parent(&base);
                tail = &tail["super::".len()..];
            }
            if base == "crate" {
                base.clear();
            }
            rest = tail;
            expand(&base, tail, &mut out);
        }
    }
    out
}

/// `pub use` re-exports: (module, exported name) → the full path it stands for.
fn reexports(srcs: &[Source]) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for s in srcs.iter().filter(|s| !s.test_only) {
        let one = Source { rel: s.rel.clone(), module: s.module.clone(), text: String::new(), test_only: false };
        let code: Vec<&str> = code_lines(non_test(&s.text)).collect();
        let mut i = 0;
        while i < code.len() {
            let t = code[i].trim_start();
            if t.starts_with("pub use ") || t.starts_with("pub(crate) use ") {
                // the whole statement, to its `;`
                let mut stmt = t[t.find("use ").expect("a use") + 4..].to_string();
                while !stmt.contains(';') && i + 1 < code.len() {
                    i += 1;
                    stmt.push_str(code[i]);
                }
                let stmt = stmt.split(';').next().unwrap_or_default();
                let stmt = if stmt.starts_with("crate::")
                    || stmt.starts_with("super::")
                    || stmt.starts_with("self::")
                    || stmt.starts_with("unstick_core::")
                {
                    stmt.to_string()
                } else {
                    format!("self::{stmt}") // a child module's path, `pub use apply::Applied`
                };
                let one = Source { text: stmt, ..one_clone(&one) };
                for full in file_references(&one) {
                    let name = full.rsplit("::").next().unwrap_or_default().to_string();
                    out.insert((s.module.clone(), name), full);
                }
            }
            i += 1;
        }
    }
    out
}

fn one_clone(s: &Source) -> Source {
    Source { rel: s.rel.clone(), module: s.module.clone(), text: s.text.clone(), test_only: s.test_only }
}

/// The file `path` is defined in: the longest module it starts with, following `pub use`
/// re-exports of the item after it (`session::Event` → `session::log`).
fn resolve_file(path: &str, modules: &BTreeSet<String>, re: &BTreeMap<(String, String), String>) -> Option<String> {
    let mut path = path.to_string();
    for _ in 0..16 {
        let m = resolve(&path, modules)?.clone();
        let rest = path[m.len()..].trim_start_matches("::");
        let item = rest.split("::").next().unwrap_or_default();
        match re.get(&(m.clone(), item.to_string())) {
            Some(to) if !item.is_empty() && *to != path => {
                path = format!("{to}{}", &rest[item.len()..]);
            }
            _ => return Some(m),
        }
    }
    None
}

/// Import edges between files: every path a file names, resolved to the file that defines it.
/// Unlike [`graph`], an edge to or from an ancestor (`mod.rs`) counts: a `mod.rs` that re-exports
/// a child and defines a type that child imports is a circle of two files.
fn file_graph(srcs: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = srcs.iter().map(|s| s.module.clone()).collect();
    let re = reexports(srcs);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in srcs.iter().filter(|s| !s.rel.ends_with("main.rs") && !s.test_only) {
        for r in file_references(s) {
            let Some(to) = resolve_file(&r, &modules, &re) else { continue };
            if to != s.module && to != "crate" {
                g.entry(s.module.clone()).or_default().insert(to);
            }
        }
    }
    g
}

#[cfg(test)]
mod file_level {
    use super::*;

    fn src(rel: &str, text: &str) -> Source {
        Source { rel: rel.into(), module: module_of(rel), text: text.into(), test_only: false }
    }

    /// The circle the module-level check missed: `a/mod.rs` re-exports `b`'s type, `b.rs` imports
    /// `c.rs`, and `c.rs` names `b`'s type through the re-export (`crate::a::Thing`).
    #[test]
    fn a_circle_through_a_reexport_is_found() {
        let srcs = vec![
            src("crates/unstick-core/src/a/mod.rs", "pub mod b;\npub mod c;\npub use self::b::Thing;\n"),
            src("crates/unstick-core/src/a/b.rs", "use super::c::Other;\npub struct Thing;\n"),
            src("crates/unstick-core/src/a/c.rs", "use crate::a::Thing;\npub struct Other;\n"),
        ];
        let g = file_graph(&srcs);
        assert_eq!(g["a::c"], BTreeSet::from(["a::b".to_string()]), "the re-export resolves to b");
        let found = cycles(&g);
        assert!(found.contains(&vec!["a::b".to_string(), "a::c".to_string()]), "{found:?}");
        // the module-level graph sees `a::c → a` (an ancestor) and finds nothing
        assert!(cycles(&graph(&srcs)).is_empty());
    }

    /// A child that imports a type defined in its `mod.rs`, which re-exports the child: two files.
    #[test]
    fn a_circle_with_the_parent_file_is_found() {
        let srcs = vec![
            src("crates/unstick-core/src/s/mod.rs", "mod log;\npub use self::log::Event;\npub enum SessionError {}\n"),
            src("crates/unstick-core/src/s/log.rs", "use super::SessionError;\npub struct Event;\n"),
        ];
        assert_eq!(cycles(&file_graph(&srcs)), BTreeSet::from([vec!["s".to_string(), "s::log".to_string()]]));
    }

    #[test]
    fn self_and_super_chains_resolve() {
        let s = src("crates/unstick-core/src/a/b/c.rs", "use super::super::x::Y;\nfn f() { self::g(); }\n");
        assert_eq!(file_references(&s), vec!["a::x::Y".to_string(), "a::b::c::g".to_string()]);
    }
}

// ---- layers inside the core (issue 23) -------------------------------------------------------

/// The core's layers, bottom first: a file may import from its own layer and those below, never
/// from above (a module is placed by its longest listed prefix). `remedy::service` drives the runner
/// and records into the session log, so it sits above `session`, which reads the journal's records.
const CORE_LAYERS: &[&[&str]] = &[
    &["text", "clock", "dirs", "jsonl", "probe"],
    &["config"],
    &["model", "fixtures"],
    &["sources", "lineage"],
    &["diagnose"],
    &["remedy"],
    &["session"],
    &["remedy::service"],
    &["train", "bundle"],
];

/// Imports that reach upward today, as `from → to` (files); none may be added, and an entry that
/// no longer holds fails too, so the list only shrinks.
const KNOWN_UPWARD: &[&str] = &[
    "sources::describe → diagnose",                     // ObjectKind/ObjectRef belong in model
    "sources::sim::build → remedy::run::backup",        // sha256_hex belongs below
    "sources::sim::kubelet → remedy::run::backup",      // sha256_hex belongs below
    "sources::sim::scenario → remedy::action::kind",    // scenario checks of action kinds: pass them in
    "sources::sim::scenario → remedy::playbook::steps", // scenario checks of pattern ids: pass them in
];

/// The layer of a core module, by its longest prefix in [`CORE_LAYERS`]; `None` outside the core.
fn layer_of(module: &str) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None; // (prefix length, layer)
    for (i, layer) in CORE_LAYERS.iter().enumerate() {
        for p in *layer {
            if (module == *p || module.starts_with(&format!("{p}::"))) && best.is_none_or(|(n, _)| p.len() > n) {
                best = Some((p.len(), i));
            }
        }
    }
    best.map(|(_, i)| i)
}

/// Every import in the core that goes to a higher layer, as `from → to`.
fn upward_imports(srcs: &[Source]) -> BTreeSet<String> {
    let core: Vec<Source> = srcs.iter().filter(|s| s.rel.starts_with("crates/unstick-core/")).map(one_clone).collect();
    let mut out = BTreeSet::new();
    for (from, tos) in file_graph(&core) {
        for to in tos {
            if let (Some(a), Some(b)) = (layer_of(&from), layer_of(&to))
                && b > a
            {
                out.insert(format!("{from} → {to}"));
            }
        }
    }
    out
}

#[test]
fn the_core_imports_only_downward() {
    let found = upward_imports(&sources());
    let known: BTreeSet<String> = KNOWN_UPWARD.iter().map(|s| s.to_string()).collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty(),
        "imports to a higher layer of the core (pass the data in, or move the type down): {new:#?}"
    );
    assert!(gone.is_empty(), "entries of KNOWN_UPWARD that no longer hold (remove them): {gone:#?}");
}

#[test]
fn the_layer_check_can_fail() {
    assert_eq!(layer_of("model::ceph"), Some(2));
    assert_eq!(layer_of("remedy::service::timers"), Some(7));
    assert_eq!(layer_of("remedy::run"), Some(5));
    assert_eq!(layer_of("ui::app"), None);
    let srcs = vec![Source {
        rel: "crates/unstick-core/src/model/x.rs".into(),
        module: "model::x".into(),
        text: "use crate::diagnose::Finding;\n".into(),
        test_only: false,
    }];
    assert_eq!(upward_imports(&srcs), BTreeSet::new(), "diagnose is not a file of this made-up core");
    let srcs = vec![
        Source {
            rel: "crates/unstick-core/src/model/x.rs".into(),
            module: "model::x".into(),
            text: "use crate::diagnose::Finding;\n".into(),
            test_only: false,
        },
        Source {
            rel: "crates/unstick-core/src/diagnose/mod.rs".into(),
            module: "diagnose".into(),
            text: "pub struct Finding;\n".into(),
            test_only: false,
        },
    ];
    assert_eq!(upward_imports(&srcs), BTreeSet::from(["model::x → diagnose".to_string()]));
}
