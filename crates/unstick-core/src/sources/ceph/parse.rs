//! Parsers for `rbd` / `ceph` output (Ceph 16 "pacific" JSON; older shapes where they differ).
//!
//! Every parser takes the raw stdout and returns a typed value or a [`ParseError`] that says what
//! was expected and where (line/column from serde_json). None of them panics on any input.

use serde::Deserialize;
use serde_json::Value;

use crate::model::ceph::{BlocklistEntry, BlocklistTarget, ImageListing, Lock, MappedDevice, OsdWatch, Watcher};

/// A parse failure: what the output was supposed to be and why it is not that.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {detail}")]
pub struct ParseError {
    /// Which output was being parsed (`rbd status --format json`).
    pub what: &'static str,
    /// serde_json's message with line and column, or a description of the unexpected shape.
    pub detail: String,
}

fn err(what: &'static str, detail: impl Into<String>) -> ParseError {
    ParseError { what, detail: detail.into() }
}

fn json(what: &'static str, raw: &str) -> Result<Value, ParseError> {
    serde_json::from_str(raw.trim_start()).map_err(|e| err(what, e.to_string()))
}

/// Parses `rbd image-meta list POOL/IMG --format json`: one object, key → value
/// (`{".rbd.csi.ceph.com/clientaddress/<volumeHandle>/<node>":"100.64.0.5"}`). Ceph 16 prints
/// nothing at all (empty stdout, exit 0) for an image without metadata: read as empty.
pub fn rbd_image_meta(raw: &str) -> Result<std::collections::BTreeMap<String, String>, ParseError> {
    const WHAT: &str = "rbd image-meta list --format json";
    if raw.trim().is_empty() {
        return Ok(Default::default());
    }
    serde_json::from_str(raw.trim_start()).map_err(|e| err(WHAT, e.to_string()))
}

/// Parses `rbd status POOL/IMG --format json`: `{"watchers":[{"address","client","cookie"}]}`.
/// Also accepts the pre-Luminous shape `{"watchers":{"watcher":{..}|[..]}}`.
pub fn rbd_status(raw: &str) -> Result<Vec<Watcher>, ParseError> {
    const WHAT: &str = "rbd status --format json";
    let v = json(WHAT, raw)?;
    let w = v.get("watchers").ok_or_else(|| err(WHAT, "no \"watchers\" key"))?;
    let list = match w {
        Value::Object(o) => o.get("watcher").cloned().unwrap_or(Value::Array(vec![])),
        other => other.clone(),
    };
    let list = match list {
        Value::Array(a) => a,
        Value::Object(_) => vec![list],
        _ => return Err(err(WHAT, "\"watchers\" is neither a list nor an object")),
    };
    list.into_iter()
        .map(|w| {
            #[derive(Deserialize)]
            struct Raw {
                address: String,
                #[serde(deserialize_with = "u64_or_string")]
                client: u64,
                #[serde(deserialize_with = "u64_or_string")]
                cookie: u64,
            }
            let r: Raw = serde_json::from_value(w).map_err(|e| err(WHAT, e.to_string()))?;
            Ok(Watcher { address: r.address, client: r.client, cookie: r.cookie })
        })
        .collect()
}

/// Parses `rbd lock ls POOL/IMG --format json`: `[{"id","locker","address"}]` (Ceph 13+), or the
/// older object form `{"<id>":{"locker","address"}}`.
pub fn rbd_lock_ls(raw: &str) -> Result<Vec<Lock>, ParseError> {
    const WHAT: &str = "rbd lock ls --format json";
    #[derive(Deserialize)]
    struct Inner {
        locker: String,
        address: String,
    }
    match json(WHAT, raw)? {
        Value::Array(_) => serde_json::from_str::<Vec<Lock>>(raw.trim_start()).map_err(|e| err(WHAT, e.to_string())),
        Value::Object(o) => o
            .into_iter()
            .map(|(id, v)| {
                let i: Inner = serde_json::from_value(v).map_err(|e| err(WHAT, e.to_string()))?;
                Ok(Lock { id, locker: i.locker, address: i.address })
            })
            .collect(),
        _ => Err(err(WHAT, "expected a list or an object of locks")),
    }
}

/// Parses `ceph osd blocklist ls --format json`, which prints a leading newline and then TWO
/// concatenated JSON arrays (addresses `{"addr","until"}`, then ranges `{"range","until"}`, the
/// second only on releases with range blocklisting). One array alone is accepted too.
pub fn blocklist_ls(raw: &str) -> Result<Vec<BlocklistEntry>, ParseError> {
    const WHAT: &str = "ceph osd blocklist ls --format json";
    #[derive(Deserialize)]
    struct Raw {
        addr: Option<String>,
        range: Option<String>,
        until: Option<String>,
    }
    let mut out = Vec::new();
    let mut docs = 0;
    for doc in serde_json::Deserializer::from_str(raw).into_iter::<Vec<Raw>>() {
        let doc = doc.map_err(|e| err(WHAT, e.to_string()))?;
        docs += 1;
        for r in doc {
            let target = match (r.addr, r.range) {
                (Some(a), _) => BlocklistTarget::Addr(a),
                (None, Some(r)) => BlocklistTarget::Range(r),
                (None, None) => return Err(err(WHAT, "entry has neither \"addr\" nor \"range\"")),
            };
            out.push(BlocklistEntry { target, until: r.until });
        }
    }
    if docs == 0 {
        return Err(err(WHAT, "empty output"));
    }
    Ok(out)
}

/// Parses `rbd ls -l POOL --format json`; snapshot rows (those with `"snapshot"`) are skipped.
pub fn rbd_ls_long(raw: &str) -> Result<Vec<ImageListing>, ParseError> {
    const WHAT: &str = "rbd ls -l --format json";
    #[derive(Deserialize)]
    struct Raw {
        image: String,
        id: Option<String>,
        #[serde(default)]
        size: u64,
        snapshot: Option<String>,
        lock_type: Option<String>,
    }
    let rows: Vec<Raw> = serde_json::from_str(raw.trim_start()).map_err(|e| err(WHAT, e.to_string()))?;
    Ok(rows
        .into_iter()
        .filter(|r| r.snapshot.is_none())
        .map(|r| ImageListing { image: r.image, id: r.id, size: r.size, lock_type: r.lock_type })
        .collect())
}

/// Parses `ceph tell osd.N dump_watchers --format json`: one entry per watch, with
/// `entity_name.num`, `cookie` and `entity_addr_t.{addr,nonce}` (no pool id in the entries).
pub fn dump_watchers(raw: &str) -> Result<Vec<OsdWatch>, ParseError> {
    const WHAT: &str = "ceph tell osd.N dump_watchers --format json";
    #[derive(Deserialize)]
    struct Name {
        num: u64,
    }
    #[derive(Deserialize)]
    struct Addr {
        addr: String,
        nonce: u64,
    }
    #[derive(Deserialize)]
    struct Raw {
        object: String,
        entity_name: Name,
        cookie: u64,
        entity_addr_t: Addr,
    }
    let rows: Vec<Raw> = serde_json::from_str(raw.trim_start()).map_err(|e| err(WHAT, e.to_string()))?;
    Ok(rows
        .into_iter()
        .map(|r| OsdWatch {
            object: r.object,
            watcher: Watcher {
                address: format!("{}/{}", r.entity_addr_t.addr, r.entity_addr_t.nonce),
                client: r.entity_name.num,
                cookie: r.cookie,
            },
        })
        .collect())
}

/// Parses `rbd ls POOL --format json`: the pool's image names (no image is opened).
pub fn rbd_ls(raw: &str) -> Result<Vec<String>, ParseError> {
    serde_json::from_str(raw.trim_start()).map_err(|e| err("rbd ls --format json", e.to_string()))
}

/// Parses `ceph osd ls --format json`: a list of OSD ids.
pub fn osd_ls(raw: &str) -> Result<Vec<u32>, ParseError> {
    serde_json::from_str(raw.trim_start()).map_err(|e| err("ceph osd ls --format json", e.to_string()))
}

/// Parses the plain-text `rbd status` output (no `--format`), as pasted in incident notes
/// (ceph/ceph `src/tools/rbd/action/Status.cc`): `Watchers:` followed by
/// `watcher=IP:PORT/NONCE client.N cookie=N` lines, or `Watchers: none`; a `Migration:` section
/// after it is ignored. Lines joined into one (`Watchers: watcher=… client.N cookie=N`) are read too.
pub fn rbd_status_text(raw: &str) -> Result<Vec<Watcher>, ParseError> {
    const WHAT: &str = "rbd status (text)";
    if !raw.contains("Watchers:") {
        return Err(err(WHAT, "no \"Watchers:\" header"));
    }
    let words: Vec<&str> = raw.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, tok) in words.iter().enumerate() {
        let Some(address) = tok.strip_prefix("watcher=") else { continue };
        let client = words
            .get(i + 1)
            .and_then(|c| c.strip_prefix("client."))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| err(WHAT, format!("no client.N after {tok}")))?;
        let cookie = words
            .get(i + 2)
            .and_then(|c| c.strip_prefix("cookie="))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| err(WHAT, format!("no cookie=N after {tok}")))?;
        out.push(Watcher { address: address.to_string(), client, cookie });
    }
    Ok(out)
}

/// Parses the plain-text `rbd lock list` / `rbd lock ls` table (ceph/ceph
/// `src/tools/rbd/action/Lock.cc`): `There is 1 exclusive lock on this image.` (or `There are N
/// shared locks…` and `Lock tag: T`), the `Locker ID Address` header, one row per lock. No locks:
/// empty output.
pub fn rbd_lock_ls_text(raw: &str) -> Result<Vec<Lock>, ParseError> {
    const WHAT: &str = "rbd lock list (text)";
    let mut lines = raw.lines().skip_while(|l| !l.trim_start().starts_with("Locker"));
    if lines.next().is_none() {
        return if raw.trim().is_empty() || raw.contains("no lock") || raw.contains("There is 0") {
            Ok(vec![])
        } else {
            Err(err(WHAT, "no \"Locker ID Address\" header"))
        };
    }
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                // An id may contain a space (`auto 1406...`): locker first, address last.
                [locker, id @ .., address] if !id.is_empty() => {
                    Ok(Lock { id: id.join(" "), locker: locker.to_string(), address: address.to_string() })
                }
                _ => Err(err(WHAT, format!("row has fewer than 3 fields: {l:?}"))),
            }
        })
        .collect()
}

/// Parses the plain-text `ceph osd blocklist ls` and the older `ceph osd blacklist ls` (ceph/ceph
/// `src/mon/OSDMonitor.cc`): one `ADDR UNTIL` line per entry, where UNTIL is `utime_t` as printed
/// (`2026-11-22T03:47:53.562837+0000`, or `2018-03-19 11:29:36.473127` on older releases) and a
/// range entry's ADDR carries `cidr:`. The `listed N entries` status line (stderr, but often pasted
/// with the output) and blank lines are skipped. A line whose first word is no address is an error
/// naming its line number.
pub fn blocklist_ls_text(raw: &str) -> Result<Vec<BlocklistEntry>, ParseError> {
    const WHAT: &str = "ceph osd blocklist ls (text)";
    let mut out = Vec::new();
    for (n, line) in raw.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || (line.starts_with("listed ") && line.ends_with(" entries")) {
            continue;
        }
        let (addr, until) = match line.split_once(char::is_whitespace) {
            Some((a, u)) => (a, Some(u.trim().to_string()).filter(|u| !u.is_empty())),
            None => (line, None),
        };
        let target = if addr.starts_with("cidr:") && crate::model::ceph::parse_range(addr).is_some() {
            BlocklistTarget::Range(addr.to_string())
        } else if crate::model::ceph::EntityAddr::parse(addr).is_some() {
            BlocklistTarget::Addr(addr.to_string())
        } else {
            let shown: String = addr.chars().take(60).collect();
            return Err(err(WHAT, format!("line {}: {shown:?} is not an address", n + 1)));
        };
        out.push(BlocklistEntry { target, until });
    }
    Ok(out)
}

/// Parses `rbd showmapped` / `rbd device list` on a node (ceph/ceph `src/krbd.cc`,
/// `src/tools/rbd_nbd/rbd-nbd.cc`), as JSON or text:
/// - JSON, Nautilus and later: `[{"id":"0","pool","namespace","name","snap","device"}]` (krbd;
///   rbd-nbd writes `"image"` and a numeric id); Luminous and older: an object keyed by id.
/// - Text: a header naming the columns (`id pool namespace image snap device`, older releases
///   without `namespace`), then one row per device; empty output when nothing is mapped.
pub fn showmapped(raw: &str) -> Result<Vec<MappedDevice>, ParseError> {
    if raw.trim_start().starts_with(['[', '{']) { showmapped_json(raw) } else { showmapped_text(raw) }
}

fn showmapped_json(raw: &str) -> Result<Vec<MappedDevice>, ParseError> {
    const WHAT: &str = "rbd showmapped --format json";
    #[derive(Deserialize)]
    struct Raw {
        #[serde(default, deserialize_with = "opt_string_or_number")]
        id: Option<String>,
        pool: String,
        #[serde(default)]
        namespace: String,
        #[serde(alias = "image")]
        name: String,
        #[serde(default)]
        snap: Option<String>,
        device: String,
    }
    let one = |id: Option<String>, v: Value| -> Result<MappedDevice, ParseError> {
        let r: Raw = serde_json::from_value(v).map_err(|e| err(WHAT, e.to_string()))?;
        let snap = r.snap.filter(|s| !s.is_empty() && s != "-");
        let image = crate::model::ImageRef { pool: r.pool, namespace: r.namespace, image: r.name };
        Ok(MappedDevice { id: r.id.or(id).unwrap_or_default(), image, snap, device: r.device })
    };
    match json(WHAT, raw)? {
        Value::Array(a) => a.into_iter().map(|v| one(None, v)).collect(),
        Value::Object(o) => o.into_iter().map(|(id, v)| one(Some(id), v)).collect(),
        _ => Err(err(WHAT, "expected a list or an object of devices")),
    }
}

fn showmapped_text(raw: &str) -> Result<Vec<MappedDevice>, ParseError> {
    const WHAT: &str = "rbd showmapped (text)";
    let mut lines = raw.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else { return Ok(vec![]) };
    let cols: Vec<String> = header.split_whitespace().map(str::to_ascii_lowercase).collect();
    let at = |name: &str| cols.iter().position(|c| c == name);
    let (Some(pool), Some(image), Some(device)) = (at("pool"), at("image").or(at("name")), at("device")) else {
        return Err(err(WHAT, "no \"pool … image … device\" header"));
    };
    let (id, ns, snap) = (at("id"), at("namespace"), at("snap"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // An empty namespace leaves its column blank: the row is one field short.
            let shift = usize::from(ns.is_some() && f.len() + 1 == cols.len());
            let get = |i: Option<usize>| -> Option<&str> {
                let i = i?;
                match ns {
                    Some(n) if shift == 1 && i == n => Some(""),
                    Some(n) if shift == 1 && i > n => f.get(i - 1).copied(),
                    _ => f.get(i).copied(),
                }
            };
            if f.len() + shift != cols.len() {
                let shown: String = l.chars().take(80).collect();
                return Err(err(WHAT, format!("row does not match the header: {shown:?}")));
            }
            let field = |i| get(Some(i)).unwrap_or("").to_string();
            Ok(MappedDevice {
                id: get(id).unwrap_or("").to_string(),
                image: crate::model::ImageRef {
                    pool: field(pool),
                    namespace: get(ns).unwrap_or("").to_string(),
                    image: field(image),
                },
                snap: get(snap).filter(|s| *s != "-" && !s.is_empty()).map(str::to_string),
                device: field(device),
            })
        })
        .collect()
}

fn opt_string_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}

fn u64_or_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        N(u64),
        S(String),
    }
    match Either::deserialize(d)? {
        Either::N(n) => Ok(n),
        Either::S(s) => s
            .trim_start_matches("client.")
            .parse()
            .map_err(|_| serde::de::Error::custom(format!("not a number: {s:?}"))),
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "recorded_tests.rs"]
mod recorded_tests;
