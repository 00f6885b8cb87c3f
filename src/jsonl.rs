//! Appending to JSONL files (the incident journal, `remedy::journal`, and the session log,
//! `session::log`): one record per line, written with one `write` and fsync'd.
//!
//! A write that failed part-way (ENOSPC, EIO) leaves a torn last line without its newline.
//! [`append_line`] repairs that tail before every append by ending it with a newline, so the next
//! record always starts on a line of its own: the torn piece stays one unreadable line, which the
//! readers report (with file and line) and skip, instead of swallowing the next record too. The
//! repair is a newline, not a truncation, because a journal may be appended to by two processes
//! (`unstick` and `unstick undo`) and cutting the file back could cut the other's record.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

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
