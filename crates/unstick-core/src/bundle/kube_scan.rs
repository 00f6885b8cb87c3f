//! Reading `kube.json` from a file ([`parse_reader`]), fast: the file
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

use std::cell::Cell;

use super::format::BundleError;
use super::kube_list::{Held, Pending, Sink, child_kind, parse_from};
use crate::model::Snapshot;

/// Bytes read from the file at a time.
const BLOCK: u64 = 1 << 20;

/// [`super::kube_list::parse`] from a reader, streamed: one item's text at a time is held and parsed straight into
/// the slim types, so reading a 100k-pod `kube.json` costs the model plus one item, not the file
/// plus a `serde_json::Value` tree of it (issues 13 and 29). The file's size is not limited: what is
/// held besides the model (one item, a nested `List`, the fields around `items`, or the items that
/// wait for a list's `kind`) is, to `held_max` bytes.
///
/// Items are cut out of large blocks read from `r` and parsed from memory ([`super::kube_scan`]);
/// a document that is not a plain object with an `items` array, or has any error, is read again
/// from where `r` was with serde_json's streaming reader, whose messages (line and column in the
/// file) the error then carries, the same as [`super::kube_list::parse`]'s.
///
/// Errors: as [`super::kube_list::parse`]; more than `held_max` bytes held at once (a shape error saying so); I/O
/// errors (reported as invalid JSON at the position reached).
pub fn parse_reader(
    file: &str,
    mut r: impl std::io::Read + std::io::Seek,
    held_max: u64,
    snap: &mut Snapshot,
) -> Result<usize, BundleError> {
    let start = r.stream_position().map_err(|e| BundleError::json(file, &serde_json::Error::io(e)))?;
    let before = Lens::of(snap);
    if let Some(skipped) = parse(file, &mut r, held_max, snap) {
        return Ok(skipped);
    }
    before.truncate(snap);
    r.seek(std::io::SeekFrom::Start(start)).map_err(|e| BundleError::json(file, &serde_json::Error::io(e)))?;
    let held = Held { since: Cell::new(0), over: Cell::new(false), max: held_max };
    let metered = Metered { r, held: &held };
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(metered));
    let r = parse_from(file, &mut de, "", Some(&held), snap);
    if held.over.get() {
        return Err(too_much_held(file, held_max));
    }
    r
}

/// The error for more than `held_max` bytes held at once while reading `file`.
fn too_much_held(file: &str, held_max: u64) -> BundleError {
    let cap = bytesize::ByteSize(held_max).display().iec();
    BundleError::shape(
        file,
        format!(
            "more than {cap:.0} read without a complete item (an item, a nested List and the fields \
             around `items` are held whole while they are read)"
        ),
    )
}

/// The lengths of a snapshot's Kubernetes lists, to undo a partial read.
struct Lens([usize; 6]);

impl Lens {
    fn of(s: &Snapshot) -> Self {
        Lens([s.nodes.len(), s.pods.len(), s.pvcs.len(), s.pvs.len(), s.volume_attachments.len(), s.events.len()])
    }

    fn truncate(&self, s: &mut Snapshot) {
        let [n, p, c, v, a, e] = self.0;
        s.nodes.truncate(n);
        s.pods.truncate(p);
        s.pvcs.truncate(c);
        s.pvs.truncate(v);
        s.volume_attachments.truncate(a);
        s.events.truncate(e);
    }
}

/// A reader that fails once more than [`Held::max`] bytes were read since the last item was taken.
struct Metered<'h, R> {
    r: R,
    held: &'h Held,
}

impl<R: std::io::Read> std::io::Read for Metered<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.r.read(buf)?;
        let since = self.held.since.get() + n as u64;
        self.held.since.set(since);
        if since > self.held.max {
            self.held.over.set(true);
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "too much held"));
        }
        Ok(n)
    }
}

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

    /// After a member or element: `,` (another follows: true) or `close` (the object or array
    /// ends: false), either consumed; anything else is [`Fallback`].
    fn next_or_close(&mut self, close: u8) -> Result<bool, Fallback> {
        match self.peek()? {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(Fallback),
        }
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
        if !w.next_or_close(b'}')? {
            break;
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
        if !w.next_or_close(b']')? {
            break;
        }
    }
    Ok(())
}
