//! The fast path of reading `kube.json` from a file ([`super::kube_list::parse_reader`]): the file
//! is read in blocks of [`BLOCK`] bytes, each item of the top-level `items` array is cut out by a
//! scan that follows only strings and brackets, and is parsed from memory by serde_json (a slice
//! parses several times faster than serde_json's byte-at-a-time reader, which kept a copy of each
//! item besides; issue 29).
//!
//! Only the common shape is read here: one object whose `items` is an array, the items read by the
//! same [`Sink`] as the streaming reader. Anything else, and any error (syntax, shape, I/O), gives
//! `None`: the caller reads the file again with the streaming reader, whose error then says what
//! and where (line and column in the file). The scan never judges JSON: every byte it cuts out is
//! parsed by serde_json before it counts.

use std::io::Read;

use serde_json::value::RawValue;

use super::kube_list::{Pending, Sink, child_kind};
use crate::model::Snapshot;

/// Bytes read from the file at a time.
const BLOCK: u64 = 1 << 20;

/// The fast path stopped: read the file again with the streaming reader.
struct Fallback;

/// The unread part of the file: `buf[pos..]`, refilled block by block.
struct Window<'r, R> {
    r: &'r mut R,
    buf: Vec<u8>,
    pos: usize,
    /// Most bytes held in `buf` at once: past it, the streaming reader decides (and refuses).
    held_max: u64,
}

impl<R: Read> Window<'_, R> {
    /// Reads one more block, dropping what was consumed; `Ok(shift)` is how far indices into
    /// `buf` moved down. `Fallback` at the end of the file, on an I/O error, or past `held_max`.
    fn more(&mut self) -> Result<usize, Fallback> {
        let shift = self.pos;
        self.buf.drain(..shift);
        self.pos = 0;
        if self.buf.len() as u64 > self.held_max {
            return Err(Fallback);
        }
        let n = (&mut *self.r).take(BLOCK).read_to_end(&mut self.buf).map_err(|_| Fallback)?;
        if n == 0 {
            return Err(Fallback);
        }
        Ok(shift)
    }

    /// The next byte that is not JSON whitespace (not consumed); `None` at the end of the file.
    fn peek(&mut self) -> Result<Option<u8>, Fallback> {
        loop {
            match self.buf[self.pos..].iter().position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t')) {
                Some(k) => {
                    self.pos += k;
                    return Ok(Some(self.buf[self.pos]));
                }
                None => {
                    self.pos = self.buf.len();
                    match self.more() {
                        Ok(_) => {}
                        Err(Fallback) if self.at_eof() => return Ok(None),
                        Err(Fallback) => return Err(Fallback),
                    }
                }
            }
        }
    }

    /// True when nothing is left to read (after a failed [`Self::more`] with nothing held).
    fn at_eof(&self) -> bool {
        self.buf.len() == self.pos && self.buf.len() as u64 <= self.held_max
    }

    /// Consumes `b` after whitespace, else `Fallback`.
    fn expect(&mut self, b: u8) -> Result<(), Fallback> {
        if self.peek()? != Some(b) {
            return Err(Fallback);
        }
        self.pos += 1;
        Ok(())
    }

    /// The end (index into `buf`) of the JSON value starting at `pos` (after whitespace): a
    /// string, an object or array (brackets counted outside strings), or a scalar (up to `,`,
    /// `]`, `}` or whitespace). Whether it is valid JSON is for the parser to say.
    fn value_end(&mut self) -> Result<usize, Fallback> {
        self.peek()?.ok_or(Fallback)?;
        let mut i = self.pos;
        let mut depth = 0usize;
        let mut in_str = false;
        loop {
            while i >= self.buf.len() {
                i -= self.more()?;
            }
            if in_str {
                match memchr::memchr2(b'"', b'\\', &self.buf[i..]) {
                    Some(k) if self.buf[i + k] == b'\\' => i += k + 2,
                    Some(k) => {
                        i += k + 1;
                        in_str = false;
                        if depth == 0 {
                            return Ok(i);
                        }
                    }
                    None => i = self.buf.len(),
                }
                continue;
            }
            match self.buf[i] {
                b'"' => in_str = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => return Ok(i),
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(i + 1);
                    }
                }
                b',' | b' ' | b'\n' | b'\r' | b'\t' if depth == 0 => return Ok(i),
                _ => {}
            }
            i += 1;
        }
    }

    /// The value at `pos` as text, consumed (valid UTF-8, else `Fallback`; not yet checked JSON).
    fn value(&mut self) -> Result<&str, Fallback> {
        let end = self.value_end()?;
        let start = std::mem::replace(&mut self.pos, end);
        if (end - start) as u64 > self.held_max {
            return Err(Fallback);
        }
        std::str::from_utf8(&self.buf[start..end]).map_err(|_| Fallback)
    }
}

/// Reads the document from `r` into `snap` if it has the common shape and no error: `Some(items
/// skipped)`, or `None` (the caller undoes what was added to `snap` and reads again, which also
/// decides whether more than `held_max` bytes would be held).
pub(super) fn parse(file: &str, r: &mut impl Read, held_max: u64, snap: &mut Snapshot) -> Option<usize> {
    let mut w = Window { r, buf: Vec::with_capacity(2 * BLOCK as usize), pos: 0, held_max };
    let mut sink = Sink { file, snap, skipped: 0, error: None, held: None };
    document(&mut w, &mut sink).ok().map(|()| sink.skipped)
}

/// `{ "key": value, ..., "items": [ item, ... ], ... }` and nothing after it.
fn document<R: Read>(w: &mut Window<'_, R>, sink: &mut Sink<'_>) -> Result<(), Fallback> {
    let mut fields: Vec<(String, Box<RawValue>)> = vec![];
    let mut pending = Pending::new();
    let mut has_items = false;
    let mut held = 0u64;
    w.expect(b'{')?;
    loop {
        if w.peek()? != Some(b'"') {
            return Err(Fallback);
        }
        let key: String = serde_json::from_str(w.value()?).map_err(|_| Fallback)?;
        w.expect(b':')?;
        if key == "items" && !has_items {
            has_items = true;
            let child = child_kind(&fields);
            let c = child.as_ref().map(|(k, a)| (k.as_str(), a.as_str()));
            items(w, sink, c, &mut pending)?;
            held += pending.iter().map(|(_, v)| v.len() as u64).sum::<u64>();
        } else {
            let raw = RawValue::from_string(w.value()?.to_string()).map_err(|_| Fallback)?;
            held += raw.get().len() as u64;
            fields.push((key, raw));
        }
        if held > w.held_max {
            return Err(Fallback);
        }
        match w.peek()? {
            Some(b',') => w.pos += 1,
            Some(b'}') => {
                w.pos += 1;
                break;
            }
            _ => return Err(Fallback),
        }
    }
    if w.peek()?.is_some() {
        return Err(Fallback);
    }
    sink.finish("", &fields, has_items, pending).map_err(|_| Fallback)
}

/// `[ item, ... ]`, each item handed to `sink` as soon as it is cut out.
fn items<R: Read>(
    w: &mut Window<'_, R>,
    sink: &mut Sink<'_>,
    child: Option<(&str, &str)>,
    pending: &mut Pending,
) -> Result<(), Fallback> {
    w.expect(b'[')?;
    if w.peek()? == Some(b']') {
        w.pos += 1;
        return Ok(());
    }
    for i in 0.. {
        let raw = w.value()?;
        sink.next_item("", i, raw, child, pending).map_err(|_| Fallback)?;
        match w.peek()? {
            Some(b',') => w.pos += 1,
            Some(b']') => {
                w.pos += 1;
                break;
            }
            _ => return Err(Fallback),
        }
    }
    Ok(())
}
