//! Picking a session log the way a person names it: `latest`, or a unique prefix of its id
//! (`unstick export 20261122t05`). An ambiguous prefix is an error that lists the candidates.

use std::path::{Path, PathBuf};

use super::error::SessionError;

/// The log `arg` names among the `.jsonl` files of `base`: the newest one for `latest` (by start
/// time, then id), else the one whose id starts with `arg`. `Ok(None)`: nothing matches.
pub fn by_prefix_or_latest(base: &Path, arg: &str) -> Result<Option<PathBuf>, SessionError> {
    let list = super::export::list(base)?;
    if arg == "latest" {
        return Ok(list.into_iter().max_by(|a, b| (a.started, &a.id).cmp(&(b.started, &b.id))).map(|s| s.path));
    }
    let mut hits: Vec<_> = list.into_iter().filter(|s| !arg.is_empty() && s.id.starts_with(arg)).collect();
    match hits.len() {
        0 => Ok(None),
        1 => Ok(hits.pop().map(|s| s.path)),
        _ => {
            hits.sort_by(|a, b| a.id.cmp(&b.id));
            Err(SessionError::Ambiguous(arg.to_string(), hits.into_iter().map(|s| s.id).collect()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_prefix_and_ambiguity() {
        let dir = tempfile::tempdir().unwrap();
        for id in ["20261122t051500z-live-a-1f2e", "20261122t061500z-train-b-0001", "20261122t061500z-train-b-0002"] {
            std::fs::write(dir.path().join(format!("{id}.jsonl")), "").unwrap();
        }
        let p = |arg| by_prefix_or_latest(dir.path(), arg);
        assert_eq!(p("20261122t05").unwrap().unwrap(), dir.path().join("20261122t051500z-live-a-1f2e.jsonl"));
        assert_eq!(p("nothing").unwrap(), None);
        let Err(SessionError::Ambiguous(_, c)) = p("20261122t06") else { panic!() };
        assert_eq!(c.len(), 2);
        let msg = p("20261122t06").unwrap_err().to_string();
        assert!(msg.contains("0001") && msg.contains("0002"), "{msg}");
        // no start record anywhere: the greatest id is the newest (ids begin with the UTC time)
        assert_eq!(p("latest").unwrap().unwrap(), dir.path().join("20261122t061500z-train-b-0002.jsonl"));
    }
}
