//! Ceph facts: watchers, locks, blocklist entries and the addresses that tie them to nodes.

use std::fmt;
use std::net::IpAddr;

/// A RADOS client address as Ceph prints it: `IP:PORT/NONCE` (`10.10.11.23:0/4208975345`).
///
/// A nonce of 0 with port 0 (`IP:0/0`) is what `ceph osd blocklist add IP` stores: it matches every
/// client instance on that host. An optional `v1:`/`v2:`/`any:` prefix is accepted and dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityAddr {
    /// Host address.
    pub ip: IpAddr,
    /// TCP port; 0 for clients.
    pub port: u16,
    /// Per-process instance number; 0 means "any instance".
    pub nonce: u32,
}

impl EntityAddr {
    /// Parses `IP:PORT/NONCE`, `[IPv6]:PORT/NONCE` or `IP:PORT` (nonce 0).
    /// Returns `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        let s = s
            .strip_prefix("v1:")
            .or_else(|| s.strip_prefix("v2:"))
            .or_else(|| s.strip_prefix("any:"))
            .unwrap_or(s);
        let (hostport, nonce) = match s.rsplit_once('/') {
            Some((hp, n)) => (hp, n.parse().ok()?),
            None => (s, 0),
        };
        let (host, port) = hostport.rsplit_once(':')?;
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        Some(Self { ip: host.parse().ok()?, port: port.parse().ok()?, nonce })
    }

    /// True when this is a whole-host address (`IP:0/0`): as a blocklist entry it fences every client
    /// on the host.
    pub fn is_whole_host(&self) -> bool {
        self.port == 0 && self.nonce == 0
    }
}

impl fmt::Display for EntityAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ip {
            IpAddr::V4(ip) => write!(f, "{ip}:{}/{}", self.port, self.nonce),
            IpAddr::V6(ip) => write!(f, "[{ip}]:{}/{}", self.port, self.nonce),
        }
    }
}

/// One watcher on an image header object, from `rbd status` (`watchers[]`) or `ceph tell osd.N
/// dump_watchers`. A watcher means some client has the image open (mapped or librbd).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Watcher {
    /// `IP:PORT/NONCE` as Ceph printed it.
    pub address: String,
    /// Client id number (`client.<N>`).
    pub client: u64,
    /// Watch cookie; changes when the client re-watches, so never treat it as stable.
    pub cookie: u64,
}

/// One advisory lock from `rbd lock ls` (`kubelet_lock_magic_<node>` for in-tree RBD, `auto <cookie>`
/// for an exclusive-lock owner).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Lock {
    /// Lock id (`kubelet_lock_magic_node1`).
    pub id: String,
    /// Locker entity (`client.24128`).
    pub locker: String,
    /// Locker address `IP:PORT/NONCE`.
    pub address: String,
}

/// What a blocklist entry fences.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BlocklistTarget {
    /// One address: `IP:PORT/NONCE`, or `IP:0/0` for every client on the host.
    Addr(String),
    /// A CIDR range, printed by Ceph as `NETWORK:0/PREFIXLEN` (`10.1.0.0:0/16`).
    Range(String),
}

/// One entry of `ceph osd blocklist ls`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BlocklistEntry {
    /// The fenced address or range.
    pub target: BlocklistTarget,
    /// Expiry as Ceph printed it (`2026-11-22T03:47:53.562837+0000`), if given.
    pub until: Option<String>,
}

impl BlocklistEntry {
    /// The entry's text as Ceph prints it (address or range).
    pub fn text(&self) -> &str {
        match &self.target {
            BlocklistTarget::Addr(a) | BlocklistTarget::Range(a) => a,
        }
    }

    /// True when this entry blocks the client at `addr`: the exact address, a whole-host entry
    /// (`IP:0/0`) for the same IP, or a range containing the IP.
    pub fn covers(&self, addr: &EntityAddr) -> bool {
        match &self.target {
            BlocklistTarget::Addr(a) => match EntityAddr::parse(a) {
                Some(e) if e.is_whole_host() => e.ip == addr.ip,
                Some(e) => e == *addr,
                None => false,
            },
            BlocklistTarget::Range(r) => range_contains(r, addr.ip),
        }
    }

    /// True when this entry covers a host IP as a whole (a whole-host address or a range): the
    /// kind of entry that keeps a recovered node fenced.
    pub fn covers_whole_host(&self, ip: IpAddr) -> bool {
        match &self.target {
            BlocklistTarget::Addr(a) => {
                EntityAddr::parse(a).is_some_and(|e| e.is_whole_host() && e.ip == ip)
            }
            BlocklistTarget::Range(r) => range_contains(r, ip),
        }
    }
}

/// `NETWORK:0/PREFIXLEN` (Ceph's form) or plain `NETWORK/PREFIXLEN`, optionally with `cidr:`.
fn range_contains(range: &str, ip: IpAddr) -> bool {
    let r = range.strip_prefix("cidr:").unwrap_or(range);
    let Some((net, len)) = r.rsplit_once('/') else { return false };
    let net = net.strip_suffix(":0").unwrap_or(net);
    let net = net.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(net);
    let (Ok(net), Ok(len)) = (net.parse::<IpAddr>(), len.parse::<u32>()) else { return false };
    match (net, ip) {
        (IpAddr::V4(n), IpAddr::V4(i)) if len <= 32 => {
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            u32::from(n) & mask == u32::from(i) & mask
        }
        (IpAddr::V6(n), IpAddr::V6(i)) if len <= 128 => {
            let mask = if len == 0 { 0 } else { u128::MAX << (128 - len) };
            u128::from(n) & mask == u128::from(i) & mask
        }
        _ => false,
    }
}

/// One image from `rbd ls -l POOL --format json` (snapshot rows are dropped by the parser).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImageListing {
    /// Image name.
    pub image: String,
    /// Internal id; the header object is `rbd_header.<id>` (format 2).
    pub id: Option<String>,
    /// Provisioned size in bytes.
    pub size: u64,
    /// `exclusive` or `shared` when someone holds a lock.
    pub lock_type: Option<String>,
}

/// A watch from `ceph tell osd.N dump_watchers --format json`: one per watched object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsdWatch {
    /// Object name, `rbd_header.<image id>` for RBD images.
    pub object: String,
    /// The watcher, in the same shape as `rbd status`.
    pub watcher: Watcher,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_addresses() {
        let a = EntityAddr::parse("10.10.11.23:0/4208975345").unwrap();
        assert_eq!(a.to_string(), "10.10.11.23:0/4208975345");
        assert!(!a.is_whole_host());
        assert!(EntityAddr::parse("127.0.0.1:0/0").unwrap().is_whole_host());
        assert_eq!(EntityAddr::parse("v1:127.0.0.1:6789/0").unwrap().port, 6789);
        assert_eq!(EntityAddr::parse("[::1]:0/7").unwrap().nonce, 7);
        for bad in ["", "x", "1.2.3.4", "1.2.3.4:x/1", "1.2.3.4:0/-1", "1.2.3.4:0/99999999999"] {
            assert_eq!(EntityAddr::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn coverage() {
        let client = EntityAddr::parse("10.10.11.23:0/4208975345").unwrap();
        let e = |t| BlocklistEntry { target: t, until: None };
        assert!(e(BlocklistTarget::Addr("10.10.11.23:0/4208975345".into())).covers(&client));
        assert!(!e(BlocklistTarget::Addr("10.10.11.23:0/1".into())).covers(&client));
        assert!(e(BlocklistTarget::Addr("10.10.11.23:0/0".into())).covers(&client));
        assert!(e(BlocklistTarget::Range("10.10.0.0:0/16".into())).covers(&client));
        assert!(!e(BlocklistTarget::Range("10.11.0.0:0/16".into())).covers(&client));
        assert!(e(BlocklistTarget::Range("0.0.0.0:0/0".into())).covers(&client));
        let ip = client.ip;
        assert!(!e(BlocklistTarget::Addr("10.10.11.23:0/4208975345".into())).covers_whole_host(ip));
        assert!(e(BlocklistTarget::Addr("10.10.11.23:0/0".into())).covers_whole_host(ip));
    }
}
