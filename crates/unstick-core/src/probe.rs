//! `unstick probe`: the node-side scan of seed 003. Finds every mount of an RBD device in every
//! mount namespace on the node, by reading `/proc/<pid>/mountinfo` and
//! `/proc/<pid>/task/<tid>/mountinfo` (a thread may have its own namespace), and matching the
//! mount source by name (`/dev/rbd3`) and by `major:minor` (from `/sys/block/<dev>/dev`).
//!
//! Each mount namespace is parsed once (keyed by the `/proc/<pid>/ns/mnt` link). Every holder is
//! reported with its PID, command, cgroup (container hint) and mount point, and whether it is the
//! host's own namespace (PID 1's): holders outside it are what keeps `rbd unmap` busy.
//! Unreadable entries (processes that exit during the scan, permissions) are skipped and counted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// Where to look, and for which device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeOptions {
    /// `rbd3` or `/dev/rbd3`; `None` = every RBD / NBD device (`/dev/rbd*`, `/dev/nbd*`, and the
    /// `rbd` major from `/proc/devices`).
    pub device: Option<String>,
    /// The proc filesystem (default `/proc`; `/host/proc` from a container).
    pub proc_root: PathBuf,
    /// The sys filesystem (default `/sys`).
    pub sys_root: PathBuf,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        Self { device: None, proc_root: "/proc".into(), sys_root: "/sys".into() }
    }
}

/// One process (or thread) that has the device mounted in its mount namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountHolder {
    /// Process id.
    pub pid: u32,
    /// Thread id, when only this thread (not the whole process) is in the namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<u32>,
    /// `/proc/<pid>/comm` (`node_exporter`), empty if unreadable.
    pub comm: String,
    /// The cgroup path of `/proc/<pid>/cgroup` (v2 line or the first v1 line), a container hint
    /// (`/kubepods/besteffort/pod<uid>/<container id>`); empty if unreadable.
    pub cgroup: String,
    /// Mount namespace as the kernel names it (`mnt:[4026532201]`), empty if unreadable.
    pub mount_namespace: String,
    /// True when this is PID 1's namespace (the host's own mount, e.g. kubelet's global mount).
    pub host_namespace: bool,
    /// Where it is mounted in that namespace.
    pub mount_point: String,
    /// Mount source (`/dev/rbd3`).
    pub source: String,
    /// `major:minor` of the mounted device.
    pub major_minor: String,
    /// Filesystem type (`ext4`).
    pub fstype: String,
}

/// The probe's JSON output (also `probe/<node>.json` in a support bundle).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// Node host name (from `/proc/sys/kernel/hostname`).
    pub node: String,
    /// When the scan ran.
    pub scanned_at: Timestamp,
    /// The device asked for (`rbd3`), or `None` for all RBD devices.
    pub device: Option<String>,
    /// Its `major:minor` from `/sys/block/<dev>/dev`, when the device exists.
    pub major_minor: Option<String>,
    /// Processes holding a mount of the device, host namespace included, sorted by PID.
    pub holders: Vec<MountHolder>,
    /// Number of processes scanned.
    pub processes: usize,
    /// Number of mount namespaces parsed.
    pub namespaces: usize,
    /// Entries that could not be read (processes that exited, permissions).
    pub unreadable: usize,
    /// The node's own addresses (the host network namespace, PID 1's: local IPv4 of
    /// `/proc/1/net/fib_trie`, global IPv6 of `/proc/1/net/if_inet6`; loopback and link-local
    /// left out): a Ceph client bound to a storage interface has one of them
    /// ([`crate::attribution`]). Absent from reports of older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<std::net::IpAddr>,
}

/// The local IPv4 addresses of a `/proc/net/fib_trie` (each `|-- <ip>` followed by `/32 host
/// LOCAL`), loopback left out, sorted, each once.
pub fn fib_trie_local(text: &str) -> Vec<std::net::IpAddr> {
    let mut last: Option<std::net::IpAddr> = None;
    let mut out = vec![];
    for line in text.lines().map(str::trim) {
        if let Some(ip) = line.strip_prefix("|-- ") {
            last = ip.trim().parse().ok();
        } else if line.starts_with("/32 host LOCAL")
            && let Some(ip) = last.filter(|ip| !ip.is_loopback())
        {
            out.push(ip);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The global IPv6 addresses of a `/proc/net/if_inet6` (32 hex digits, then the interface
/// index, prefix length, scope `00` = global, flags, name), sorted.
pub fn if_inet6_global(text: &str) -> Vec<std::net::IpAddr> {
    let mut out: Vec<std::net::IpAddr> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (hex, _, _, scope) = (w.next()?, w.next()?, w.next()?, w.next()?);
            let bits = u128::from_str_radix(hex, 16).ok().filter(|_| hex.len() == 32 && scope == "00")?;
            Some(std::net::IpAddr::V6(std::net::Ipv6Addr::from(bits)))
        })
        .collect();
    out.sort();
    out
}

/// One parsed mountinfo line (see proc(5)): the fields the probe needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountInfo {
    /// Field 3, `major:minor`.
    pub major_minor: String,
    /// Field 5, the mount point (octal escapes such as `\040` decoded).
    pub mount_point: String,
    /// The filesystem type after the ` - ` separator.
    pub fstype: String,
    /// The mount source after the filesystem type.
    pub source: String,
}

/// Parses one mountinfo line; `None` if it is not one.
/// `2892 2729 250:0 / /host/data/... rw,relatime - ext4 /dev/rbd3 rw,stripe=1024`.
pub fn parse_mountinfo_line(line: &str) -> Option<MountInfo> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 2 || !l[2].contains(':') {
        return None;
    }
    Some(MountInfo {
        major_minor: l[2].to_string(),
        mount_point: unescape(l[4]),
        fstype: r[0].to_string(),
        source: unescape(r[1]),
    })
}

/// Decodes mountinfo's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` backslash).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            let oct = s.get(i + 1..i + 4).unwrap_or("");
            if oct.len() == 3
                && oct.bytes().all(|c| (b'0'..=b'7').contains(&c))
                && let Ok(v) = u8::from_str_radix(oct, 8)
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a mount must match.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    /// `/dev/rbd3` (exact source), or `None` for any RBD/NBD device.
    path: Option<String>,
    /// `major:minor` of the device, when known.
    major_minor: Option<String>,
    /// The `rbd` block major (any minor matches) when scanning for all devices.
    rbd_major: Option<String>,
}

impl Target {
    fn matches(&self, m: &MountInfo) -> bool {
        if self.major_minor.as_ref().is_some_and(|mm| &m.major_minor == mm) {
            return true;
        }
        match &self.path {
            Some(p) => &m.source == p,
            None => {
                is_rbd_source(&m.source)
                    || self.rbd_major.as_ref().is_some_and(|maj| m.major_minor.split(':').next() == Some(maj))
            }
        }
    }
}

fn is_rbd_source(s: &str) -> bool {
    ["/dev/rbd", "/dev/nbd"].iter().any(|p| {
        s.strip_prefix(p).is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_digit() || c == b'p'))
    })
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Scans the node, stamping the report with `clock`. Never fails: what cannot be read is counted
/// in `unreadable`.
pub fn scan(opts: &ProbeOptions, clock: &dyn crate::clock::Clock) -> ProbeReport {
    let device = opts.device.as_deref().map(|d| d.trim_start_matches("/dev/").to_string()).filter(|d| !d.is_empty());
    let major_minor = device
        .as_ref()
        .filter(|d| !d.contains('/') && !d.contains(".."))
        .and_then(|d| read(&opts.sys_root.join("block").join(d).join("dev")))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    let rbd_major = read(&opts.proc_root.join("devices")).and_then(|d| {
        d.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            let (maj, name) = (w.next()?, w.next()?);
            (name == "rbd").then(|| maj.to_string())
        })
    });
    let target =
        Target { path: device.as_ref().map(|d| format!("/dev/{d}")), major_minor: major_minor.clone(), rbd_major };
    let proc = &opts.proc_root;
    let host_ns = std::fs::read_link(proc.join("1/ns/mnt")).ok().map(|p| p.display().to_string());
    let mut by_ns: HashMap<String, Vec<MountInfo>> = HashMap::new();
    let mut report = ProbeReport {
        node: read(&proc.join("sys/kernel/hostname")).map(|s| s.trim().to_string()).unwrap_or_default(),
        scanned_at: clock.now(),
        device: device.clone(),
        major_minor,
        holders: vec![],
        processes: 0,
        namespaces: 0,
        unreadable: 0,
        addresses: [
            read(&proc.join("1/net/fib_trie")).map(|t| fib_trie_local(&t)),
            read(&proc.join("1/net/if_inet6")).map(|t| if_inet6_global(&t)),
        ]
        .into_iter()
        .flatten()
        .flatten()
        .collect(),
    };
    let Ok(dir) = std::fs::read_dir(proc) else {
        report.unreadable += 1;
        return report;
    };
    let mut pids: Vec<u32> = dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
    pids.sort_unstable();
    for pid in pids {
        report.processes += 1;
        let pdir = proc.join(pid.to_string());
        // (tid or None for the process itself, namespace id, mountinfo path)
        let mut views: Vec<(Option<u32>, String, PathBuf)> = vec![];
        let pns = std::fs::read_link(pdir.join("ns/mnt")).ok().map(|p| p.display().to_string());
        views.push((None, pns.clone().unwrap_or_default(), pdir.join("mountinfo")));
        if let Ok(tasks) = std::fs::read_dir(pdir.join("task")) {
            for t in tasks.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()) {
                if t == pid {
                    continue;
                }
                let tdir = pdir.join("task").join(t.to_string());
                let tns = std::fs::read_link(tdir.join("ns/mnt")).ok().map(|p| p.display().to_string());
                // Threads sharing the process's namespace add nothing; unknown namespaces are read.
                if tns.is_some() && tns == pns {
                    continue;
                }
                views.push((Some(t), tns.unwrap_or_default(), tdir.join("mountinfo")));
            }
        }
        for (tid, ns, path) in views {
            let cached = (!ns.is_empty()).then(|| by_ns.get(&ns).cloned()).flatten();
            let hits = match cached {
                Some(h) => h,
                None => {
                    let Some(text) = read(&path) else {
                        report.unreadable += 1;
                        continue;
                    };
                    let hits: Vec<MountInfo> =
                        text.lines().filter_map(parse_mountinfo_line).filter(|m| target.matches(m)).collect();
                    if !ns.is_empty() {
                        report.namespaces += 1;
                        by_ns.insert(ns.clone(), hits.clone());
                    }
                    hits
                }
            };
            if hits.is_empty() {
                continue;
            }
            let comm = read(&pdir.join("comm")).map(|s| s.trim().to_string()).unwrap_or_default();
            let cgroup = read(&pdir.join("cgroup")).map(|c| cgroup_hint(&c)).unwrap_or_default();
            for m in hits {
                report.holders.push(MountHolder {
                    pid,
                    tid,
                    comm: comm.clone(),
                    cgroup: cgroup.clone(),
                    mount_namespace: ns.clone(),
                    host_namespace: !ns.is_empty() && host_ns.as_deref() == Some(ns.as_str()),
                    mount_point: m.mount_point,
                    source: m.source,
                    major_minor: m.major_minor,
                    fstype: m.fstype,
                });
            }
        }
    }
    report
}

/// The most telling cgroup path: the v2 line (`0::/...`), else the first v1 line with a path
/// other than `/`.
pub fn cgroup_hint(text: &str) -> String {
    let paths: Vec<&str> = text.lines().filter_map(|l| l.splitn(3, ':').nth(2)).collect();
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .filter(|p| *p != "/")
        .or_else(|| paths.iter().copied().find(|p| *p != "/"))
        .or_else(|| paths.first().copied())
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
#[path = "probe_tests.rs"]
mod tests;
