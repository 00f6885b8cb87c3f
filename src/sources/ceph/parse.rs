//! Parsers for `rbd` / `ceph` output (Ceph 16 "pacific" JSON; older shapes where they differ).
//!
//! Every parser takes the raw stdout and returns a typed value or a [`ParseError`] that says what
//! was expected and where (line/column from serde_json). None of them panics on any input.

use serde::Deserialize;
use serde_json::Value;

use crate::model::ceph::{
    BlocklistEntry, BlocklistTarget, ImageListing, Lock, OsdWatch, Watcher,
};

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
        Value::Array(_) => {
            serde_json::from_str::<Vec<Lock>>(raw.trim_start()).map_err(|e| err(WHAT, e.to_string()))
        }
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
    let rows: Vec<Raw> =
        serde_json::from_str(raw.trim_start()).map_err(|e| err(WHAT, e.to_string()))?;
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
    let rows: Vec<Raw> =
        serde_json::from_str(raw.trim_start()).map_err(|e| err(WHAT, e.to_string()))?;
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

/// Parses `ceph osd ls --format json`: a list of OSD ids.
pub fn osd_ls(raw: &str) -> Result<Vec<u32>, ParseError> {
    serde_json::from_str(raw.trim_start()).map_err(|e| err("ceph osd ls --format json", e.to_string()))
}

/// Parses the plain-text `rbd status` output (no `--format`), as pasted in incident notes:
/// `Watchers:` followed by `watcher=IP:PORT/NONCE client.N cookie=N` lines (`Watchers: none` → empty).
pub fn rbd_status_text(raw: &str) -> Result<Vec<Watcher>, ParseError> {
    const WHAT: &str = "rbd status (text)";
    if !raw.contains("Watchers:") {
        return Err(err(WHAT, "no \"Watchers:\" header"));
    }
    let mut out = Vec::new();
    for tok in raw.split_whitespace().filter(|t| t.starts_with("watcher=")) {
        let address = tok.trim_start_matches("watcher=").to_string();
        let after = &raw[raw.find(tok).unwrap_or(0) + tok.len()..];
        let mut words = after.split_whitespace();
        let client = words
            .next()
            .and_then(|c| c.strip_prefix("client."))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| err(WHAT, format!("no client.N after {tok}")))?;
        let cookie = words
            .next()
            .and_then(|c| c.strip_prefix("cookie="))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| err(WHAT, format!("no cookie=N after {tok}")))?;
        out.push(Watcher { address, client, cookie });
    }
    Ok(out)
}

/// Parses the plain-text `rbd lock list` table (`Locker ID Address` header, then one row per lock).
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
                [locker, id @ .., address] if !id.is_empty() => Ok(Lock {
                    id: id.join(" "),
                    locker: locker.to_string(),
                    address: address.to_string(),
                }),
                _ => Err(err(WHAT, format!("row has fewer than 3 fields: {l:?}"))),
            }
        })
        .collect()
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
