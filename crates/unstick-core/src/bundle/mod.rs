//! Support bundles: the inputs of a diagnosis as files, so it can run offline
//! (`unstick diagnose --bundle DIR`) and so a person can assemble one by hand from the standard
//! tools' raw outputs, JSON or the plain text pasted from a terminal or a ticket. Layout (a bundle
//! has `kube.json` or `manifest.json`; every other file is optional, and what is missing is listed,
//! not guessed; `docs/bundle.md` lists the commands and the versions whose forms are read):
//!
//! ```text
//! DIR/kube.json                                  kubectl get nodes,pods,pvc,pv,volumeattachments,events -A -o json
//! DIR/ceph/blocklist.json | blocklist.txt        ceph osd blocklist ls [--format json] (or the older `blacklist ls`)
//! DIR/ceph/images/<pool>/<image>/status.json|txt rbd status [--format json]
//! DIR/ceph/images/<pool>/<image>/locks.json|txt  rbd lock ls [--format json] (array, or the older object form)
//! DIR/ceph/images/<pool>/<image>/info.json       rbd info --format json (optional; collect does not write it)
//! DIR/ceph/images/<pool>/<rados ns>/<image>/...  the same for an image in a RADOS namespace
//! DIR/showmapped/<node>.json | <node>.txt        rbd showmapped [--format json] on that node (optional)
//! DIR/probe/<node>.json                          unstick probe output from that node (optional)
//! DIR/remediators.json                           Medik8s remediators as `unstick collect` read them (optional)
//! DIR/csiaddons/networkfences.json              kubectl get networkfences.csiaddons.openshift.io -o json (optional)
//! DIR/csiaddons/csiaddonsnodes.json             kubectl get csiaddonsnodes.csiaddons.openshift.io -A -o json (optional)
//! DIR/csiaddons/networkfenceclasses.json        kubectl get networkfenceclasses.csiaddons.openshift.io -o json (optional)
//! DIR/manifest.json                              {"collected_at", "context", "unstick_version", "errors", "ceph"} (optional)
//! ```
//!
//! When both the JSON and the text form of a file are present, the JSON one is read.

mod collect;
mod format;
mod kube_list;
mod kube_scan;
mod read;
mod write;

pub use self::collect::{CEPH_STOPPED, ceph_to_bundle};
pub use self::format::{
    BLOCKLIST, BLOCKLIST_TEXT, Bundle, BundleError, CSIADDONS_NODES, CephEnded, CephPart, IMAGES, KUBE, MANIFEST,
    Manifest, NETWORK_FENCE_CLASSES, NETWORK_FENCES, PROBES, REMEDIATORS, SHOWMAPPED,
};
pub use self::kube_list::{list_item, list_of, parse as parse_kube, push_items, to_list as kube_list};
pub use self::kube_scan::parse_reader as parse_kube_reader;
pub use self::read::{FILE_MAX_BYTES, KUBE_HELD_MAX_BYTES, read};
pub use self::write::{Blocklist, ListPart, Writer, image_dir, write_snapshot};
pub use self::write::{put_csiaddons_nodes, put_fences};

#[cfg(test)]
mod kube_list_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_formats;
