//! JSONL files (the incident journal, `remedy::journal`, and the session log, `session::log`):
//! one record per line, written with one `write` and fsync'd; one opener ([`open_append`]), one
//! appender ([`append_line`]) and one tolerant reader ([`parse_lines`]) for both.
//!
//! A write that failed part-way (ENOSPC, EIO) leaves a torn last line without its newline.
//! [`append_line`] repairs that tail before every append by ending it with a newline, so the next
//! record always starts on a line of its own: the torn piece stays one unreadable line, which the
//! readers report (with file and line) and skip, instead of swallowing the next record too. The
//! repair is a newline, not a truncation, because a journal may be appended to by two processes
//! (`unstick` and `unstick undo`) and cutting the file back could cut the other's record.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// A line that could not be read as a record. The line is left in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// The file.
    pub path: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// What is wrong (`truncated (no final newline)`, the JSON error, `schema v2 is newer`).
    pub error: String,
    /// The start of the line, sanitized (and redacted where the caller asks), at most 80 characters.
    pub excerpt: String,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {} (kept in place): {}", self.path.display(), self.line, self.error, self.excerpt)
    }
}

/// A record kind read by [`parse_lines`]: its schema version and what a bad line is called.
pub trait Versioned: DeserializeOwned {
    /// The newest schema version this build reads.
    const SCHEMA_VERSION: u32;
    /// `journal` or `session`: used in "not a journal record".
    const KIND: &'static str;
    /// The record's `v`.
    fn version(&self) -> u32;
    /// A line that did not deserialize but is still a record of a kind this build does not know
    /// (kept by name, e.g. a newer event), or `None` (the line is a problem). Default: `None`.
    fn fallback(raw: &[u8]) -> Option<Self> {
        let _ = raw;
        None
    }
}

/// Records with their 1-based line numbers, and the lines that could not be read.
pub type Parsed<T> = (Vec<(usize, T)>, Vec<LineProblem>);

/// Reads JSONL `bytes` tolerantly; never panics, never fails. Blank lines are skipped; a line that
/// does not parse, or whose schema is newer than [`Versioned::SCHEMA_VERSION`], is a
/// [`LineProblem`] (a last line without its newline is called truncated). `excerpt` turns the raw
/// line (lossy UTF-8) into the shown excerpt (it must sanitize); `path` only names the file.
pub fn parse_lines<T: Versioned>(path: &Path, bytes: &[u8], excerpt: impl Fn(&str) -> String) -> Parsed<T> {
    let (mut records, mut problems) = (vec![], vec![]);
    let ends_clean = bytes.last().is_none_or(|b| *b == b'\n');
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let count = lines.len();
    for (i, raw) in lines.into_iter().enumerate() {
        let lineno = i + 1;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let problem = |error: String| {
            let shown = excerpt(&String::from_utf8_lossy(raw));
            LineProblem { path: path.to_path_buf(), line: lineno, error, excerpt: shown.chars().take(80).collect() }
        };
        match serde_json::from_slice::<T>(raw).or_else(|e| T::fallback(raw).ok_or(e)) {
            Ok(rec) if rec.version() > T::SCHEMA_VERSION => problems.push(problem(format!(
                "schema v{} is newer than this unstick (v{})",
                rec.version(),
                T::SCHEMA_VERSION
            ))),
            Ok(rec) => records.push((lineno, rec)),
            Err(e) if i + 1 == count && !ends_clean => {
                problems.push(problem(format!("truncated last line (no final newline): {e}")))
            }
            Err(e) => problems.push(problem(format!("not a {} record: {e}", T::KIND))),
        }
    }
    (records, problems)
}

/// What went wrong in [`open_append`]: the step and its OS error (callers add the path).
#[derive(Debug)]
pub struct OpenError {
    /// The file or directory the step was about.
    pub path: PathBuf,
    /// What was being done (`open`, `fsync`, `fsync directory`, `repair torn last line`).
    pub op: &'static str,
    /// The OS error.
    pub source: std::io::Error,
}

/// Opens (creating if needed) `path` for reading and appending. A new file is fsync'd with its
/// directory (and `sync_parent` too, when given: a directory just created); a torn last line gets
/// its newline ([`repair_tail`]) so it stays one unreadable line. The directory must exist.
pub fn open_append(path: &Path, sync_parent: Option<&Path>) -> Result<File, OpenError> {
    let err = |p: &Path, op: &'static str| {
        let path = p.to_path_buf();
        move |source| OpenError { path, op, source }
    };
    let existed = path.exists();
    let mut file = OpenOptions::new().read(true).append(true).create(true).open(path).map_err(err(path, "open"))?;
    if !existed {
        file.sync_all().map_err(err(path, "fsync"))?;
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(dir).map_err(err(dir, "fsync directory"))?;
        }
        if let Some(dir) = sync_parent {
            sync_dir(dir).map_err(err(dir, "fsync directory"))?;
        }
    }
    if repair_tail(&mut file).map_err(err(path, "repair torn last line"))? {
        file.sync_data().map_err(err(path, "fsync"))?;
    }
    Ok(file)
}

/// fsyncs a directory (after creating an entry in it).
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir).and_then(|d| d.sync_all())
}

/// Ends `file` with a newline if it is non-empty and its last byte is not one. Returns whether
/// it wrote one. `file` must be readable and opened for appending.
pub fn repair_tail(file: &mut File) -> std::io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(false);
    }
    file.write_all(b"\n")?;
    Ok(true)
}

/// Appends `line` (one serialized record; a newline is added) after [`repair_tail`], in one
/// `write` (O_APPEND), then fsyncs the data. Errors: the IO error of the step that failed.
pub fn append_line(file: &mut File, line: &[u8]) -> std::io::Result<()> {
    repair_tail(file)?;
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line);
    buf.push(b'\n');
    file.write_all(&buf)?;
    file.flush()?;
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &std::path::Path) -> File {
        std::fs::OpenOptions::new().read(true).append(true).create(true).open(path).unwrap()
    }

    /// Issue 10: after a write torn by a full disk, the next record is on its own line.
    #[test]
    fn a_torn_tail_is_repaired_before_the_next_record() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        let mut f = open(&p);
        append_line(&mut f, br#"{"a":1}"#).unwrap();
        // what a write cut by ENOSPC leaves: half a record, no newline
        f.write_all(br#"{"a":2,"lo"#).unwrap();
        append_line(&mut f, br#"{"a":3}"#).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines, [r#"{"a":1}"#, r#"{"a":2,"lo"#, r#"{"a":3}"#]);
        assert!(!repair_tail(&mut f).unwrap());
    }

    /// A full disk is an error, not a panic, and the file stays appendable afterwards.
    #[test]
    fn dev_full_is_an_error() {
        let Ok(mut f) = std::fs::OpenOptions::new().read(true).append(true).open("/dev/full") else {
            return;
        };
        let e = append_line(&mut f, b"{}").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28), "{e}");
    }
}
