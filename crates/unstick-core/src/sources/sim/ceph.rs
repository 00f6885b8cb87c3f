//! The simulated cluster's Ceph: images with their watchers, advisory locks and snapshots, and the
//! OSD blocklist; plus [`CephState::run`], which answers the `rbd` / `ceph` argv the console sends
//! with the same stdout / stderr / exit codes as Ceph 16 (shapes as parsed by
//! [`crate::sources::ceph::parse`]), so the console's Ceph code runs unchanged on a scenario.
//!
//! Behaviours kept from real Ceph (see `../shared/harness/ceph.md`): `rbd lock rm` blocklists the
//! old locker's address for an hour; a blocklisted client's watch disappears after the watch
//! timeout; an entry without a nonce (`IP:0/0`) or a CIDR range covers every client of those hosts.

use std::collections::BTreeMap;
use std::net::IpAddr;

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::model::ceph::{BlocklistEntry, BlocklistTarget, EntityAddr, Lock, Watcher};

/// One simulated RBD image.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Image {
    /// Image id (`rbd info` `id`).
    pub id: String,
    /// Size in bytes.
    pub size: u64,
    /// Watchers; a fenced one carries the time it was blocklisted and goes away after the watch
    /// timeout.
    pub watchers: Vec<(Watcher, Option<Timestamp>)>,
    /// Advisory locks.
    pub locks: Vec<Lock>,
    /// Snapshots: name and creation time.
    pub snaps: Vec<(String, Timestamp)>,
}

/// One blocklist entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocked {
    /// `IP:PORT/NONCE`, or a CIDR range when `range`.
    pub entry: String,
    /// Is it a range (`ceph osd blocklist range add`)?
    pub range: bool,
    /// When it expires.
    pub until: Timestamp,
}

impl Blocked {
    /// The entry as `ceph osd blocklist ls` reports it, in the console's model.
    pub fn entry(&self) -> BlocklistEntry {
        let target = if self.range {
            BlocklistTarget::Range(self.entry.clone())
        } else {
            BlocklistTarget::Addr(self.entry.clone())
        };
        BlocklistEntry { target, until: Some(self.until.to_string()) }
    }

    /// Does this entry fence the client at `addr`? The console's own rule
    /// ([`BlocklistEntry::covers`]): the exact client, a whole-host entry, or a range.
    pub fn covers(&self, addr: &str) -> bool {
        EntityAddr::parse(addr).is_some_and(|a| self.entry().covers(&a))
    }
}

/// The Ceph side of a scenario.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CephState {
    /// Images by spec (`pool/image`).
    pub images: BTreeMap<String, Image>,
    /// `ceph osd blocklist ls`.
    pub blocklist: Vec<Blocked>,
    /// Seconds a fenced client's watch survives (the OSD's watch timeout).
    pub watch_timeout_seconds: i64,
}

/// `(exit code, stdout, stderr)` of a simulated call.
pub type Run = (i32, String, String);

fn enoent(what: &str) -> Run {
    (2, String::new(), format!("rbd: error opening image {what}: (2) No such file or directory\n"))
}

fn usage(args: &[&str]) -> Run {
    (22, String::new(), format!("error: unknown or unsupported command in the simulation: {}\n", args.join(" ")))
}

/// Options whose value follows them; dropped before matching the command.
const VALUED: [&str; 7] = [
    "--conf",
    "--id",
    "--keyring",
    "--client_mount_timeout",
    "--rados_mon_op_timeout",
    "--rados_osd_op_timeout",
    "--format",
];

/// The tool (`rbd`, `ceph`) and the command words of an argv, without the identity, timeout,
/// `--format` and `--no-progress` options (`rbd --conf c status p/i --format json` →
/// `("rbd", ["status", "p/i"])`).
pub fn command(argv: &[String]) -> (&str, Vec<&str>) {
    let tool = argv.first().map(|b| b.rsplit('/').next().unwrap_or(b)).unwrap_or("");
    let mut words: Vec<&str> = Vec::new();
    let mut it = argv.iter().skip(1).map(String::as_str);
    while let Some(w) = it.next() {
        if VALUED.contains(&w) {
            it.next();
        } else if w != "--no-progress" {
            words.push(w);
        }
    }
    (tool, words)
}

/// True for the commands that change Ceph (`lock rm`, `snap create`, `blocklist add|rm`).
pub fn is_write(words: &[&str]) -> bool {
    words.iter().any(|w| matches!(*w, "rm" | "remove" | "create" | "add"))
}

impl CephState {
    /// Drops expired blocklist entries and watches of fenced clients whose timeout passed.
    pub fn expire(&mut self, now: Timestamp) {
        self.blocklist.retain(|b| b.until > now);
        let t = SignedDuration::from_secs(self.watch_timeout_seconds);
        for img in self.images.values_mut() {
            img.watchers.retain(|(_, fenced)| fenced.is_none_or(|f| f.checked_add(t).is_ok_and(|end| now < end)));
        }
    }

    /// Adds a blocklist entry and marks the watchers it covers as fenced.
    pub fn block(&mut self, entry: &str, range: bool, seconds: i64, now: Timestamp) -> String {
        let entry = match (range, EntityAddr::parse(entry)) {
            (false, Some(a)) => a.to_string(),
            (false, None) => match entry.parse::<IpAddr>() {
                Ok(ip) => EntityAddr { ip, port: 0, nonce: 0 }.to_string(),
                Err(_) => entry.to_string(),
            },
            (true, _) => entry.to_string(),
        };
        let until = now.checked_add(SignedDuration::from_secs(seconds)).unwrap_or(Timestamp::MAX);
        self.blocklist.retain(|b| b.entry != entry);
        let b = Blocked { entry: entry.clone(), range, until };
        for img in self.images.values_mut() {
            for (w, fenced) in &mut img.watchers {
                if fenced.is_none() && b.covers(&w.address) {
                    *fenced = Some(now);
                }
            }
        }
        self.blocklist.push(b);
        entry
    }

    /// Is this client address blocklisted?
    pub fn is_blocked(&self, addr: &str) -> bool {
        self.blocklist.iter().any(|b| b.covers(addr))
    }

    /// Answers one `rbd` / `ceph` argv (binary first) at `now`.
    pub fn run(&mut self, argv: &[String], now: Timestamp) -> Run {
        self.expire(now);
        let (tool, words) = command(argv);
        match tool {
            "rbd" => self.rbd(&words, now),
            "ceph" => self.ceph(&words, now),
            _ => (127, String::new(), format!("{tool}: not found in the simulation\n")),
        }
    }

    fn image(&mut self, spec: &str) -> Result<&mut Image, Run> {
        self.images.get_mut(spec).ok_or_else(|| enoent(spec))
    }

    fn rbd(&mut self, w: &[&str], now: Timestamp) -> Run {
        match w {
            ["status", spec] => match self.image(spec) {
                Ok(img) => {
                    let ws: Vec<_> = img
                        .watchers
                        .iter()
                        .map(|(w, _)| json!({"address": w.address, "client": w.client, "cookie": w.cookie}))
                        .collect();
                    (0, json!({"watchers": ws}).to_string(), String::new())
                }
                Err(e) => e,
            },
            ["lock", "ls" | "list", spec] => match self.image(spec) {
                Ok(img) => (0, serde_json::to_string(&img.locks).unwrap_or_default(), String::new()),
                Err(e) => e,
            },
            ["lock", "rm" | "remove", spec, id, locker] => {
                let img = match self.image(spec) {
                    Ok(i) => i,
                    Err(e) => return e,
                };
                let Some(i) = img.locks.iter().position(|l| l.id == *id && l.locker == *locker) else {
                    return (2, String::new(), "rbd: releasing lock failed: (2) No such file or directory\n".into());
                };
                let lock = img.locks.remove(i);
                // measured on Ceph 16: breaking a lock blocklists the old locker for an hour
                self.block(&lock.address, false, 3600, now);
                (0, String::new(), String::new())
            }
            ["snap", "create", full] => {
                let Some((spec, snap)) = full.split_once('@') else { return usage(w) };
                match self.image(spec) {
                    Ok(img) if img.snaps.iter().any(|(s, _)| s == snap) => {
                        (17, String::new(), "rbd: failed to create snapshot: (17) File exists\n".into())
                    }
                    Ok(img) => {
                        img.snaps.push((snap.to_string(), now));
                        (0, String::new(), "Creating snap: 100% complete...done.\n".into())
                    }
                    Err(e) => e,
                }
            }
            ["snap", "ls" | "list", spec] => match self.image(spec) {
                Ok(img) => {
                    let size = img.size;
                    let rows: Vec<_> = img
                        .snaps
                        .iter()
                        .enumerate()
                        .map(|(i, (n, t))| json!({"id": i + 4, "name": n, "size": size, "protected": "false", "timestamp": t.strftime("%a %b %e %H:%M:%S %Y").to_string()}))
                        .collect();
                    (0, serde_json::to_string(&rows).unwrap_or_default(), String::new())
                }
                Err(e) => e,
            },
            ["info", spec] => match self.image(spec) {
                Ok(img) => {
                    let name = spec.rsplit('/').next().unwrap_or(spec);
                    let v = json!({"name": name, "id": img.id, "size": img.size, "objects": img.size / 4_194_304,
                                   "order": 22, "object_size": 4_194_304, "format": 2, "features": ["layering"]});
                    (0, v.to_string(), String::new())
                }
                Err(e) => e,
            },
            ["ls", "-l" | "--long", pool] => {
                let rows: Vec<_> = self
                    .images
                    .iter()
                    .filter_map(|(spec, img)| {
                        let (p, name) = spec.split_once('/')?;
                        (p == *pool).then(|| json!({"image": name, "id": img.id, "size": img.size, "format": 2}))
                    })
                    .collect();
                (0, serde_json::to_string(&rows).unwrap_or_default(), String::new())
            }
            _ => usage(w),
        }
    }

    fn ceph(&mut self, w: &[&str], now: Timestamp) -> Run {
        let until = |t: Timestamp| t.strftime("%Y-%m-%dT%H:%M:%S.000000+0000").to_string();
        match w {
            ["osd", "blocklist", "ls" | "list"] => {
                let addrs: Vec<_> = self
                    .blocklist
                    .iter()
                    .filter(|b| !b.range)
                    .map(|b| json!({"addr": b.entry, "until": until(b.until)}))
                    .collect();
                let ranges: Vec<_> = self
                    .blocklist
                    .iter()
                    .filter(|b| b.range)
                    .map(|b| json!({"range": b.entry, "until": until(b.until)}))
                    .collect();
                let out = format!("\n{}{}", json!(addrs), json!(ranges));
                (0, out, format!("listed {} entries\n", self.blocklist.len()))
            }
            ["osd", "blocklist", "add", addr, rest @ ..] => {
                let secs = rest.first().and_then(|s| s.parse().ok()).unwrap_or(3600);
                let e = self.block(addr, false, secs, now);
                (
                    0,
                    String::new(),
                    format!(
                        "blocklisting {e} until {} ({secs} sec)\n",
                        until(now.checked_add(SignedDuration::from_secs(secs)).unwrap_or(Timestamp::MAX))
                    ),
                )
            }
            ["osd", "blocklist", "range", "add", cidr, rest @ ..] => {
                let secs = rest.first().and_then(|s| s.parse().ok()).unwrap_or(3600);
                let e = self.block(cidr, true, secs, now);
                (
                    0,
                    String::new(),
                    format!(
                        "blocklisting range {e} until {} ({secs} sec)\n",
                        until(now.checked_add(SignedDuration::from_secs(secs)).unwrap_or(Timestamp::MAX))
                    ),
                )
            }
            ["osd", "blocklist", "rm", addr] => {
                let before = self.blocklist.len();
                let target = EntityAddr::parse(addr).map(|a| a.to_string()).unwrap_or_else(|| addr.to_string());
                self.blocklist.retain(|b| b.range || b.entry != target);
                let msg = if self.blocklist.len() < before { "un-blocklisting" } else { "not blocklisted:" };
                (0, String::new(), format!("{msg} {target}\n"))
            }
            ["osd", "blocklist", "range", "rm", cidr] => {
                self.blocklist.retain(|b| !(b.range && b.entry == *cidr));
                (0, String::new(), format!("un-blocklisting range {cidr}\n"))
            }
            // the scan falls back to `rbd status` per image when dump_watchers is not allowed
            ["osd", "ls"] | ["tell", ..] => {
                (13, String::new(), "Error EACCES: access denied (the simulation serves per-image reads only)\n".into())
            }
            _ => usage(w),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::ceph::parse;

    fn now() -> Timestamp {
        "2026-11-22T03:00:00Z".parse().unwrap()
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn state() -> CephState {
        let mut c = CephState { watch_timeout_seconds: 30, ..Default::default() };
        c.images.insert(
            "replicapool/img".into(),
            Image {
                id: "1a2b".into(),
                size: 64 << 20,
                watchers: vec![(Watcher { address: "10.0.0.5:0/1234".into(), client: 77, cookie: 9 }, None)],
                locks: vec![Lock {
                    id: "kubelet_lock_magic_n1".into(),
                    locker: "client.77".into(),
                    address: "10.0.0.5:0/1234".into(),
                }],
                snaps: vec![],
            },
        );
        c
    }

    #[test]
    fn outputs_parse_with_the_console_parsers() {
        let mut c = state();
        let (code, out, _) =
            c.run(&argv("rbd --conf x --client_mount_timeout 5 status replicapool/img --format json"), now());
        assert_eq!(code, 0);
        assert_eq!(parse::rbd_status(&out).unwrap()[0].client, 77);
        let (_, out, _) = c.run(&argv("rbd lock ls replicapool/img --format json"), now());
        assert_eq!(parse::rbd_lock_ls(&out).unwrap()[0].id, "kubelet_lock_magic_n1");
        let (_, out, _) = c.run(&argv("ceph osd blocklist ls --format json"), now());
        assert!(parse::blocklist_ls(&out).unwrap().is_empty());
        assert_eq!(c.run(&argv("rbd status replicapool/none --format json"), now()).0, 2);
    }

    #[test]
    fn lock_rm_blocklists_the_locker_and_the_watch_times_out() {
        let mut c = state();
        let r = c.run(&argv("rbd lock rm replicapool/img kubelet_lock_magic_n1 client.77"), now());
        assert_eq!(r.0, 0, "{r:?}");
        assert!(c.is_blocked("10.0.0.5:0/1234"));
        assert!(!c.is_blocked("10.0.0.5:0/999"), "exact entry fences one client instance only");
        assert_eq!(c.images["replicapool/img"].watchers.len(), 1, "still there until the watch timeout");
        c.expire(now() + SignedDuration::from_secs(31));
        assert!(c.images["replicapool/img"].watchers.is_empty());
        assert_eq!(c.run(&argv("rbd lock rm replicapool/img kubelet_lock_magic_n1 client.77"), now()).0, 2);
    }

    #[test]
    fn whole_host_and_range_entries_cover_every_client_of_the_host() {
        let mut c = state();
        c.run(&argv("ceph osd blocklist add 10.0.0.5"), now());
        assert!(c.is_blocked("10.0.0.5:0/42"));
        c.run(&argv("ceph osd blocklist rm 10.0.0.5:0/0"), now());
        assert!(!c.is_blocked("10.0.0.5:0/42"));
        c.run(&argv("ceph osd blocklist range add 10.0.0.0/24"), now());
        assert!(c.is_blocked("10.0.0.77:0/1"));
        assert!(!c.is_blocked("10.0.1.1:0/1"));
        let (_, out, _) = c.run(&argv("ceph osd blocklist ls --format json"), now());
        assert_eq!(parse::blocklist_ls(&out).unwrap().len(), 1);
    }

    #[test]
    fn command_words_drop_options_and_writes_are_told_apart() {
        let a = argv("rbd --conf /c --client_mount_timeout 5 --rados_osd_op_timeout 10 lock rm p/i id client.1");
        let (tool, words) = command(&a);
        assert_eq!((tool, words.join(" ").as_str()), ("rbd", "lock rm p/i id client.1"));
        assert!(is_write(&words));
        let ls = argv("ceph osd blocklist ls --format json");
        let (_, words) = command(&ls);
        assert_eq!(words, ["osd", "blocklist", "ls"]);
        assert!(!is_write(&words));
    }

    #[test]
    fn snapshots_are_created_once_and_listed() {
        let mut c = state();
        assert_eq!(c.run(&argv("rbd snap create replicapool/img@s1"), now()).0, 0);
        assert_eq!(c.run(&argv("rbd snap create replicapool/img@s1"), now()).0, 17);
        let (_, out, _) = c.run(&argv("rbd snap ls replicapool/img --format json"), now());
        assert_eq!(crate::remedy::run::backup::snap_names(&out).unwrap(), vec!["s1".to_string()]);
        assert_ne!(c.run(&argv("rbd frobnicate"), now()).0, 0);
    }
}
